// file_util.cpp - whole-file reads and atomic writes.
#include "file_util.h"

#include "error.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tidalrt_driver {

std::string read_file(const std::string &path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    fail_input(path + ": cannot read: " + errno_message(errno));
  std::string bytes;
  struct stat info;
  if (fstat(fd, &info) == 0 && S_ISDIR(info.st_mode)) {
    close(fd);
    fail_input(path + ": cannot read: " + errno_message(EISDIR));
  }
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int error = errno;
      close(fd);
      fail_input(path + ": cannot read: " + errno_message(error));
    }
    if (n == 0)
      break;
    bytes.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return bytes;
}

std::string directory_of(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

void read_file_range(const std::string &path, uint64_t offset, void *dst,
                     size_t size) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    fail_input(path + ": cannot read: " + errno_message(errno));
  size_t done = 0;
  while (done < size) {
    ssize_t n = pread(fd, static_cast<char *>(dst) + done, size - done,
                      static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int error = n < 0 ? errno : 0;
      close(fd);
      fail_input(path + ": cannot read " + std::to_string(size) +
                 " bytes at offset " + std::to_string(offset) + ": " +
                 (error ? errno_message(error) : "the file is shorter"));
    }
    done += static_cast<size_t>(n);
  }
  close(fd);
}

void write_file_atomically(const std::string &path, const std::string &bytes) {
  write_file_atomically(path, [&](int fd) {
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return errno;
      done += static_cast<size_t>(n);
    }
    return 0;
  });
}

void write_file_atomically(const std::string &path,
                           const std::function<int(int fd)> &writer) {
  std::string temp = path + ".tmp." + std::to_string(getpid());
  int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0 && errno == EEXIST) {
    // Left by a killed process that had our pid.
    unlink(temp.c_str());
    fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  }
  if (fd < 0)
    fail_input(path + ": cannot write: " + errno_message(errno));
  int error = writer(fd);
  if (!error && fsync(fd) != 0)
    error = errno;
  if (close(fd) != 0 && !error)
    error = errno;
  if (!error && rename(temp.c_str(), path.c_str()) != 0)
    error = errno;
  if (error) {
    unlink(temp.c_str());
    fail_input(path + ": cannot write: " + errno_message(error));
  }
  // Make the rename itself durable; failing here loses nothing written.
  int dir = open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {
    fsync(dir);
    close(dir);
  }
}

void check_output_path(const std::string &option, const std::string &path) {
  struct stat info;
  std::string dir = directory_of(path);
  if (stat(dir.c_str(), &info) != 0)
    fail_input(option + " " + path + ": cannot write: " + errno_message(errno));
  if (!S_ISDIR(info.st_mode))
    fail_input(option + " " + path +
               ": cannot write: " + errno_message(ENOTDIR));
  if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
    fail_input(option + " " + path +
               ": cannot write: " + errno_message(EISDIR));
}

} // namespace tidalrt_driver
