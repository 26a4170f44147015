/* npy_map.c - .npy files mapped into memory instead of read (data sets
 * larger than memory). */
#define _POSIX_C_SOURCE 200809L
#include "array.h"
#include "npy_header.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The header of the .npy image at `bytes` and where its data starts; 0 if
 * the image is not one that can be viewed in place (any error included:
 * tidalrt_npy_read_memory then reports it). */
static size_t data_offset(const unsigned char *bytes, size_t size,
                          tidalrt_npy_header_t *header) {
  if (size < 10 || memcmp(bytes, TIDALRT_NPY_MAGIC, TIDALRT_NPY_MAGIC_LENGTH))
    return 0;
  int major = bytes[6], minor = bytes[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    return 0;
  size_t length_bytes = major == 1 ? 2 : 4;
  if (size < 8 + length_bytes)
    return 0;
  size_t header_length = 0;
  for (size_t i = length_bytes; i > 0; --i)
    header_length = (header_length << 8) | bytes[8 + i - 1];
  size_t offset = 8 + length_bytes + header_length;
  if (header_length > TIDALRT_NPY_MAX_HEADER_LENGTH || offset > size)
    return 0;
  tidalrt_status_t status = tidalrt_npy_parse_header(
      (const char *)bytes + 8 + length_bytes, header_length, header);
  if (status) {
    tidalrt_status_free(status);
    return 0;
  }
  size_t count, byte_size;
  status = tidalrt_shape_sizes(header->type, header->rank, header->dims, &count,
                               &byte_size);
  if (status) {
    tidalrt_status_free(status);
    return 0;
  }
  size_t width = tidalrt_element_type_size(header->type);
  if (byte_size != size - offset || !width || offset % width)
    return 0;
  return offset;
}

tidalrt_status_t tidalrt_npy_map(const char *path,
                                 tidalrt_array_t **out_array) {
  if (!out_array || !path)
    return tidalrt_npy_read(path, out_array);
  *out_array = NULL;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return tidalrt_npy_read(path, out_array); /* its message */
  struct stat info;
  /* Pipes, directories and small files are read. */
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) ||
      info.st_size < (1 << 16)) {
    close(fd);
    return tidalrt_npy_read(path, out_array);
  }
  size_t size = (size_t)info.st_size;
  void *mapping = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (mapping == MAP_FAILED)
    return tidalrt_npy_read(path, out_array);
  tidalrt_npy_header_t header;
  size_t offset = data_offset(mapping, size, &header);
  tidalrt_status_t status;
  if (offset) {
    status = tidalrt_array_wrap_mapping(header.type, header.rank, header.dims,
                                        (unsigned char *)mapping + offset,
                                        mapping, size, out_array);
    if (!status)
      return NULL;
  } else {
    /* Not viewable in place: copied (or reported) as a read would. */
    status = tidalrt_npy_read_memory(mapping, size, path, out_array);
  }
  munmap(mapping, size);
  return status;
}
