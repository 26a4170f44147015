/* npy.c - reading and atomically writing NumPy .npy files. */
#define _POSIX_C_SOURCE 200809L

#include "array.h"
#include "npy_header.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The status code for a failed system call. */
static tidalrt_status_code_t code_for_errno(int error) {
  switch (error) {
  case ENOENT:
  case ENOTDIR:
    return TIDALRT_NOT_FOUND;
  case ENOMEM:
    return TIDALRT_OUT_OF_MEMORY;
  default:
    return TIDALRT_IO_ERROR;
  }
}

/*===----------------------------------------------------------------------===
 * Reading, from a FILE or from memory
 *===----------------------------------------------------------------------===*/

typedef struct source {
  FILE *file; /* NULL when reading memory */
  const unsigned char *bytes;
  size_t size;
  size_t offset;
  int read_errno; /* set when the file's read failed, not merely ended */
} source_t;

/* Reads up to `count` bytes; returns how many were read. */
static size_t source_read(source_t *s, void *buffer, size_t count) {
  if (!s->file) {
    size_t left = s->size - s->offset;
    size_t n = count < left ? count : left;
    if (n)
      memcpy(buffer, s->bytes + s->offset, n);
    s->offset += n;
    return n;
  }
  size_t n = 0;
  while (n < count) {
    errno = 0;
    size_t got = fread((char *)buffer + n, 1, count - n, s->file);
    n += got;
    if (got == 0) {
      if (ferror(s->file))
        s->read_errno = errno ? errno : EIO;
      break;
    }
  }
  s->offset += n;
  return n;
}

/* The status for a read that returned fewer bytes than wanted. */
static tidalrt_status_t short_read(const source_t *s, const char *what,
                                   size_t wanted, size_t got) {
  if (s->read_errno)
    return tidalrt_status_make(code_for_errno(s->read_errno),
                               "read error in %s: %s", what,
                               strerror(s->read_errno));
  return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                             "truncated %s: expected %zu bytes, found %zu",
                             what, wanted, got);
}

static uint32_t load_le(const unsigned char *bytes, int count) {
  uint32_t value = 0;
  for (int i = count - 1; i >= 0; --i)
    value = (value << 8) | bytes[i];
  return value;
}

/* Reads the magic, version and header length. */
static tidalrt_status_t read_prefix(source_t *s, size_t *out_header_length) {
  unsigned char prefix[12];
  size_t got = source_read(s, prefix, 8);
  size_t magic_got =
      got < TIDALRT_NPY_MAGIC_LENGTH ? got : TIDALRT_NPY_MAGIC_LENGTH;
  if (got == 0 && !s->read_errno)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "empty file, not a .npy file");
  if (memcmp(prefix, TIDALRT_NPY_MAGIC, magic_got) != 0)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "not a .npy file (bad magic string)");
  if (got < 8)
    return short_read(s, "header", 8, got);
  int major = prefix[6], minor = prefix[7];
  int length_bytes = major == 1 ? 2 : 4;
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    return tidalrt_status_make(TIDALRT_UNSUPPORTED,
                               "unsupported .npy format version %d.%d "
                               "(expected 1.0, 2.0 or 3.0)",
                               major, minor);
  got = source_read(s, prefix + 8, (size_t)length_bytes);
  if (got < (size_t)length_bytes)
    return short_read(s, "header", 8 + (size_t)length_bytes, 8 + got);
  *out_header_length = load_le(prefix + 8, length_bytes);
  return NULL;
}

/* The bytes left to read, or SIZE_MAX when that is unknown (a pipe). */
static size_t source_left(const source_t *s) {
  if (!s->file)
    return s->size - s->offset;
  struct stat info;
  if (fstat(fileno(s->file), &info) != 0 || !S_ISREG(info.st_mode))
    return SIZE_MAX;
  /* The file was read from its start, so offset is the position. */
  return (size_t)info.st_size > s->offset ? (size_t)info.st_size - s->offset
                                          : 0;
}

static tidalrt_status_t truncated_data(const tidalrt_npy_header_t *header,
                                       size_t byte_size, size_t got) {
  char shape[TIDALRT_SHAPE_TEXT_CAPACITY];
  tidalrt_format_shape(shape, header->rank, header->dims);
  return tidalrt_status_make(
      TIDALRT_INVALID_ARGUMENT,
      "truncated data: %s %s needs %zu bytes, the file has %zu",
      tidalrt_element_type_name(header->type), shape, byte_size, got);
}

/* Reads and checks the trailing data, after the header said what to expect. */
static tidalrt_status_t read_data(source_t *s,
                                  const tidalrt_npy_header_t *header,
                                  tidalrt_array_t *array) {
  size_t byte_size = tidalrt_array_byte_size(array);
  size_t data_offset = s->offset;
  size_t got = source_read(s, tidalrt_array_data(array), byte_size);
  char shape[TIDALRT_SHAPE_TEXT_CAPACITY];
  tidalrt_format_shape(shape, tidalrt_array_rank(array),
                       tidalrt_array_dims(array));
  const char *type_name =
      tidalrt_element_type_name(tidalrt_array_element_type(array));
  if (got < byte_size) {
    if (s->read_errno)
      return short_read(s, "data", byte_size, got);
    return truncated_data(header, byte_size, got);
  }
  unsigned char extra;
  if (source_read(s, &extra, 1) == 0)
    return s->read_errno ? short_read(s, "data", 1, 0) : NULL;
  size_t extra_bytes = 1;
  struct stat info;
  if (!s->file)
    extra_bytes = s->size - data_offset - byte_size;
  else if (fstat(fileno(s->file), &info) == 0 && S_ISREG(info.st_mode) &&
           (size_t)info.st_size > data_offset + byte_size)
    extra_bytes = (size_t)info.st_size - data_offset - byte_size;
  return tidalrt_status_make(
      TIDALRT_INVALID_ARGUMENT,
      "data size mismatch: %s %s needs %zu bytes, but %zu more follow them",
      type_name, shape, byte_size, extra_bytes);
}

static tidalrt_status_t read_npy(source_t *s, tidalrt_array_t **out_array) {
  size_t header_length = 0;
  tidalrt_status_t status = read_prefix(s, &header_length);
  if (status)
    return status;
  if (header_length > TIDALRT_NPY_MAX_HEADER_LENGTH)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "header length %zu exceeds the limit of %u "
                               "bytes",
                               header_length, TIDALRT_NPY_MAX_HEADER_LENGTH);
  char *text = malloc(header_length ? header_length : 1);
  if (!text)
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY,
                               "cannot allocate the header");
  size_t got = source_read(s, text, header_length);
  tidalrt_npy_header_t header;
  if (got < header_length)
    status = short_read(s, "header", header_length, got);
  else
    status = tidalrt_npy_parse_header(text, header_length, &header);
  free(text);
  if (status)
    return status;

  /* A header may claim any size: check it against the bytes that follow
   * before allocating (fuzzing found a 133-byte file asking for 16 EiB). */
  size_t element_count, byte_size;
  status = tidalrt_shape_sizes(header.type, header.rank, header.dims,
                               &element_count, &byte_size);
  if (status)
    return status;
  size_t left = source_left(s);
  if (byte_size > left)
    return truncated_data(&header, byte_size, left);

  tidalrt_array_t *array = NULL;
  status =
      tidalrt_array_allocate(header.type, header.rank, header.dims, &array);
  if (!status)
    status = read_data(s, &header, array);
  if (status) {
    tidalrt_array_free(array);
    return status;
  }
  *out_array = array;
  return NULL;
}

tidalrt_status_t tidalrt_npy_read(const char *path,
                                  tidalrt_array_t **out_array) {
  if (!out_array)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_npy_read: out_array is NULL");
  *out_array = NULL;
  if (!path)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_npy_read: path is NULL");
  FILE *file = fopen(path, "rb");
  if (!file) {
    int error = errno;
    return tidalrt_status_make(code_for_errno(error), "%s: cannot open: %s",
                               path, strerror(error));
  }
  struct stat info;
  if (fstat(fileno(file), &info) == 0 && S_ISDIR(info.st_mode)) {
    fclose(file);
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "%s: is a directory, not a .npy file", path);
  }
  source_t source = {file, NULL, 0, 0, 0};
  tidalrt_status_t status = read_npy(&source, out_array);
  fclose(file);
  return tidalrt_status_annotate(status, "%s", path);
}

tidalrt_status_t tidalrt_npy_read_memory(const void *bytes, size_t size,
                                         const char *name,
                                         tidalrt_array_t **out_array) {
  if (!out_array)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_npy_read_memory: out_array is NULL");
  *out_array = NULL;
  if (!name)
    name = "<memory>";
  if (!bytes && size)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT, "%s: bytes is NULL",
                               name);
  source_t source = {NULL, bytes, size, 0, 0};
  return tidalrt_status_annotate(read_npy(&source, out_array), "%s", name);
}

/*===----------------------------------------------------------------------===
 * Writing: a temporary file in the same directory, renamed over the target
 *===----------------------------------------------------------------------===*/

static int write_all(int fd, const void *buffer, size_t count) {
  const char *p = buffer;
  while (count > 0) {
    /* Linux writes at most ~2 GiB per call; keep each request below it. */
    size_t chunk = count < ((size_t)1 << 30) ? count : ((size_t)1 << 30);
    ssize_t written = write(fd, p, chunk);
    if (written < 0) {
      if (errno == EINTR)
        continue;
      return errno;
    }
    if (written == 0)
      return EIO;
    p += written;
    count -= (size_t)written;
  }
  return 0;
}

/* Creates "<path>.tmp.<pid>.<n>" exclusively, with the mode a plain
 * fopen() would give, so the renamed file has ordinary permissions. */
static int create_temporary(const char *path, char **out_name) {
  static atomic_uint counter;
  size_t capacity = strlen(path) + 64;
  char *name = malloc(capacity);
  if (!name)
    return -ENOMEM;
  for (int attempt = 0; attempt < 100; ++attempt) {
    snprintf(name, capacity, "%s.tmp.%ld.%u", path, (long)getpid(),
             (unsigned)atomic_fetch_add(&counter, 1u));
    int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      *out_name = name;
      return fd;
    }
    if (errno != EEXIST)
      break;
  }
  int error = errno;
  free(name);
  return -error;
}

tidalrt_status_t tidalrt_npy_write_data(const char *path,
                                        tidalrt_element_type_t type,
                                        size_t rank, const int64_t *dims,
                                        const void *data) {
  if (!path)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_npy_write: path is NULL");
  size_t element_count, byte_size;
  tidalrt_status_t status =
      tidalrt_shape_sizes(type, rank, dims, &element_count, &byte_size);
  if (status)
    return tidalrt_status_annotate(status, "%s", path);
  if (!data && byte_size)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT, "%s: data is NULL",
                               path);
  char preamble[TIDALRT_NPY_MAX_PREAMBLE_LENGTH];
  size_t preamble_length =
      tidalrt_npy_format_preamble(preamble, type, rank, dims);
  if (!preamble_length)
    return tidalrt_status_make(TIDALRT_UNSUPPORTED, "%s: %s has no .npy dtype",
                               path, tidalrt_element_type_name(type));

  char *temporary = NULL;
  int fd = create_temporary(path, &temporary);
  if (fd < 0)
    return tidalrt_status_make(code_for_errno(-fd),
                               "%s: cannot create a temporary file next to "
                               "it: %s",
                               path, strerror(-fd));
  const char *step = "write";
  int error = write_all(fd, preamble, preamble_length);
  if (!error && byte_size)
    error = write_all(fd, data, byte_size);
  /* Sync before the rename, so that a crash cannot leave the new name
   * pointing at data that never reached the disk. */
  if (!error && fsync(fd) != 0) {
    error = errno;
    step = "sync";
  }
  if (close(fd) != 0 && !error) {
    error = errno;
    step = "close";
  }
  if (!error && rename(temporary, path) != 0) {
    error = errno;
    step = "move the temporary file into place";
  }
  if (error) {
    unlink(temporary);
    status = tidalrt_status_make(code_for_errno(error), "%s: cannot %s: %s",
                                 path, step, strerror(error));
  }
  free(temporary);
  return status;
}

tidalrt_status_t tidalrt_npy_write(const char *path,
                                   const tidalrt_array_t *array) {
  if (!array)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT, "%s: array is NULL",
                               path ? path : "<null>");
  return tidalrt_npy_write_data(
      path, tidalrt_array_element_type(array), tidalrt_array_rank(array),
      tidalrt_array_dims(array), tidalrt_array_const_data(array));
}
