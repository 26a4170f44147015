// npy_write_test.cpp - failed writes leave neither a partial file nor a
// temporary one, and never damage the file they were meant to replace.
#include "test_util.h"

#include <csignal>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

using tidalrt_test::status_ptr;

class NpyWriteTest : public tidalrt_test::TempDirTest {
protected:
  status_ptr write_floats(const std::string &file, size_t count) {
    std::vector<float> values(count, 1.0f);
    const int64_t dims[] = {static_cast<int64_t>(count)};
    return status_ptr(tidalrt_npy_write_data(
        file.c_str(), TIDALRT_ELEMENT_TYPE_F32, 1, dims, values.data()));
  }
};

TEST_F(NpyWriteTest, NonexistentDirectory) {
  std::string file = path("no/such/dir/out.npy");
  status_ptr status = write_floats(file, 4);
  ASSERT_TRUE(status);
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_NOT_FOUND);
  std::string message = tidalrt_status_message(status.get());
  EXPECT_EQ(message.rfind(file + ": ", 0), 0u) << message;
  EXPECT_NE(message.find("No such file or directory"), std::string::npos)
      << message;
  EXPECT_TRUE(list().empty());
}

TEST_F(NpyWriteTest, ParentIsAFile) {
  write_bytes("plain", "x");
  status_ptr status = write_floats(path("plain/out.npy"), 4);
  ASSERT_TRUE(status);
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_NOT_FOUND);
  EXPECT_EQ(list(), std::vector<std::string>{"plain"});
}

TEST_F(NpyWriteTest, TargetIsADirectory) {
  // The temporary file is written in full, then the rename fails: it must
  // be removed again.
  ASSERT_EQ(mkdir(path("out.npy").c_str(), 0755), 0);
  status_ptr status = write_floats(path("out.npy"), 1000);
  ASSERT_TRUE(status);
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_IO_ERROR);
  EXPECT_NE(
      std::string(tidalrt_status_message(status.get())).find("Is a directory"),
      std::string::npos)
      << tidalrt_status_message(status.get());
  EXPECT_EQ(list(), std::vector<std::string>{"out.npy"});
  EXPECT_TRUE(list("out.npy").empty());
}

TEST_F(NpyWriteTest, ReadOnlyDirectory) {
  if (geteuid() == 0)
    GTEST_SKIP() << "running as root, which ignores directory permissions";
  ASSERT_EQ(mkdir(path("ro").c_str(), 0555), 0);
  status_ptr status = write_floats(path("ro/out.npy"), 4);
  ASSERT_TRUE(status);
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_IO_ERROR);
  EXPECT_NE(std::string(tidalrt_status_message(status.get()))
                .find("Permission denied"),
            std::string::npos);
  EXPECT_TRUE(list("ro").empty());
}

TEST_F(NpyWriteTest, FailureMidWriteKeepsOldFile) {
  // A file-size limit makes write() fail part way through the data, as a
  // full disk would; even root is subject to it.
  write_bytes("out.npy", "previous contents");
  struct rlimit old_limit;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct rlimit limit = old_limit;
  limit.rlim_cur = 4096;
  void (*old_handler)(int) = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  status_ptr status = write_floats(path("out.npy"), 1 << 16);
  setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);

  ASSERT_TRUE(status);
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_IO_ERROR);
  std::string message = tidalrt_status_message(status.get());
  EXPECT_EQ(message.rfind(path("out.npy") + ": cannot write: ", 0), 0u)
      << message;
  EXPECT_EQ(read_bytes("out.npy"), "previous contents");
  EXPECT_EQ(list(), std::vector<std::string>{"out.npy"});
}

TEST_F(NpyWriteTest, ModeFollowsUmask) {
  mode_t mask = umask(022);
  umask(mask);
  ASSERT_FALSE(write_floats(path("m.npy"), 2));
  struct stat info;
  ASSERT_EQ(stat(path("m.npy").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0666 & ~mask);
}

TEST_F(NpyWriteTest, RejectsBadArguments) {
  const int64_t dims[] = {3};
  const float values[] = {1, 2, 3};
  status_ptr status(tidalrt_npy_write_data(
      path("b.npy").c_str(), TIDALRT_ELEMENT_TYPE_BF16, 1, dims, values));
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_UNSUPPORTED);
  EXPECT_NE(std::string(tidalrt_status_message(status.get()))
                .find("bfloat16 has no .npy dtype"),
            std::string::npos);

  status.reset(tidalrt_npy_write_data(
      path("n.npy").c_str(), TIDALRT_ELEMENT_TYPE_F32, 1, dims, nullptr));
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_INVALID_ARGUMENT);

  const int64_t negative[] = {-3};
  status.reset(tidalrt_npy_write_data(
      path("g.npy").c_str(), TIDALRT_ELEMENT_TYPE_F32, 1, negative, values));
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tidalrt_status_message(status.get()))
                .find(path("g.npy") + ": negative dimension"),
            std::string::npos);

  status.reset(tidalrt_npy_write_data(nullptr, TIDALRT_ELEMENT_TYPE_F32, 1,
                                      dims, values));
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_INVALID_ARGUMENT);
  status.reset(tidalrt_npy_write(path("a.npy").c_str(), nullptr));
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_INVALID_ARGUMENT);

  // Empty arrays need no data.
  const int64_t empty[] = {0, 4};
  EXPECT_STATUS_OK(tidalrt_npy_write_data(
      path("e.npy").c_str(), TIDALRT_ELEMENT_TYPE_F32, 2, empty, nullptr));
  EXPECT_EQ(list(), std::vector<std::string>{"e.npy"});
}

} // namespace
