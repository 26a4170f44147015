/* array.c - dense host arrays that own their data, and shape checks. */
#define _POSIX_C_SOURCE 200809L
#include "array.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct tidalrt_array_s {
  tidalrt_element_type_t type;
  size_t rank;
  size_t element_count;
  size_t byte_size;
  void *data;
  /* A view of a mapped file (tidalrt_npy_map): munmap'ed, not freed. */
  void *mapping;
  size_t mapping_size;
  int64_t dims[]; /* `rank` entries */
};

void tidalrt_format_shape(char *buffer, size_t rank, const int64_t *dims) {
  size_t used = 0;
  buffer[used++] = '[';
  for (size_t i = 0; i < rank && i < TIDALRT_MAX_RANK; ++i) {
    size_t room = TIDALRT_SHAPE_TEXT_CAPACITY - used;
    int written;
    if (dims[i] == TIDALRT_DIM_ANY)
      written = snprintf(buffer + used, room, "%s*", i ? ", " : "");
    else
      written =
          snprintf(buffer + used, room, "%s%" PRId64, i ? ", " : "", dims[i]);
    if (written < 0 || (size_t)written >= room)
      break;
    used += (size_t)written;
  }
  buffer[used++] = ']';
  buffer[used] = '\0';
}

tidalrt_status_t tidalrt_shape_sizes(tidalrt_element_type_t type, size_t rank,
                                     const int64_t *dims,
                                     size_t *out_element_count,
                                     size_t *out_byte_size) {
  *out_element_count = 0;
  *out_byte_size = 0;
  size_t element_size = tidalrt_element_type_size(type);
  if (element_size == 0)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "unknown element type %d", (int)type);
  if (rank > TIDALRT_MAX_RANK)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "rank %zu exceeds the maximum of %d", rank,
                               TIDALRT_MAX_RANK);
  if (rank > 0 && !dims)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "no dimensions given for rank %zu", rank);
  /* Check every dimension for sign first, so that a negative one is
   * reported even after a zero. */
  for (size_t i = 0; i < rank; ++i)
    if (dims[i] < 0)
      return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                                 "negative dimension %" PRId64 " at axis %zu",
                                 dims[i], i);
  size_t count = 1;
  int overflow = 0;
  for (size_t i = 0; i < rank; ++i) {
    if ((uint64_t)dims[i] > (uint64_t)SIZE_MAX) {
      overflow = 1;
      continue;
    }
    size_t dim = (size_t)dims[i];
    if (dim != 0 && count > SIZE_MAX / dim)
      overflow = 1;
    else
      count *= dim;
  }
  /* A zero dimension makes an overflowing product harmless. */
  for (size_t i = 0; i < rank; ++i)
    if (dims[i] == 0) {
      overflow = 0;
      count = 0;
    }
  if (overflow || count > SIZE_MAX / element_size) {
    char shape[TIDALRT_SHAPE_TEXT_CAPACITY];
    tidalrt_format_shape(shape, rank, dims);
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "%s %s is too large to address",
                               tidalrt_element_type_name(type), shape);
  }
  *out_element_count = count;
  *out_byte_size = count * element_size;
  return NULL;
}

tidalrt_status_t tidalrt_array_allocate(tidalrt_element_type_t type,
                                        size_t rank, const int64_t *dims,
                                        tidalrt_array_t **out_array) {
  if (!out_array)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "out_array must not be NULL");
  *out_array = NULL;
  size_t element_count, byte_size;
  tidalrt_status_t status =
      tidalrt_shape_sizes(type, rank, dims, &element_count, &byte_size);
  if (status)
    return status;
  /* aligned_alloc wants a multiple of the alignment, and a non-zero size so
   * that the data pointer is never NULL. */
  size_t padded = byte_size + (TIDALRT_ARRAY_ALIGNMENT - 1);
  if (padded < byte_size)
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY,
                               "cannot allocate %zu bytes", byte_size);
  padded -= padded % TIDALRT_ARRAY_ALIGNMENT;
  if (padded == 0)
    padded = TIDALRT_ARRAY_ALIGNMENT;
  tidalrt_array_t *array = malloc(sizeof(*array) + rank * sizeof(int64_t));
  void *data = aligned_alloc(TIDALRT_ARRAY_ALIGNMENT, padded);
  if (!array || !data) {
    free(array);
    free(data);
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY,
                               "cannot allocate %zu bytes for an array",
                               byte_size);
  }
  array->type = type;
  array->rank = rank;
  array->element_count = element_count;
  array->byte_size = byte_size;
  array->data = data;
  array->mapping = NULL;
  array->mapping_size = 0;
  if (rank)
    memcpy(array->dims, dims, rank * sizeof(int64_t));
  *out_array = array;
  return NULL;
}

tidalrt_status_t tidalrt_array_wrap_mapping(tidalrt_element_type_t type,
                                            size_t rank, const int64_t *dims,
                                            void *data, void *mapping,
                                            size_t mapping_size,
                                            tidalrt_array_t **out_array) {
  *out_array = NULL;
  size_t element_count, byte_size;
  tidalrt_status_t status =
      tidalrt_shape_sizes(type, rank, dims, &element_count, &byte_size);
  if (status)
    return status;
  tidalrt_array_t *array = malloc(sizeof(*array) + rank * sizeof(int64_t));
  if (!array)
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY,
                               "cannot allocate an array header");
  array->type = type;
  array->rank = rank;
  array->element_count = element_count;
  array->byte_size = byte_size;
  array->data = data;
  array->mapping = mapping;
  array->mapping_size = mapping_size;
  if (rank)
    memcpy(array->dims, dims, rank * sizeof(int64_t));
  *out_array = array;
  return NULL;
}

tidalrt_status_t tidalrt_array_create(tidalrt_element_type_t type, size_t rank,
                                      const int64_t *dims,
                                      tidalrt_array_t **out_array) {
  tidalrt_status_t status = tidalrt_array_allocate(type, rank, dims, out_array);
  if (!status)
    memset((*out_array)->data, 0, (*out_array)->byte_size);
  return status;
}

void tidalrt_array_free(tidalrt_array_t *array) {
  if (!array)
    return;
  if (array->mapping)
    munmap(array->mapping, array->mapping_size);
  else
    free(array->data);
  free(array);
}

tidalrt_element_type_t
tidalrt_array_element_type(const tidalrt_array_t *array) {
  return array->type;
}

size_t tidalrt_array_rank(const tidalrt_array_t *array) { return array->rank; }

const int64_t *tidalrt_array_dims(const tidalrt_array_t *array) {
  return array->dims;
}

size_t tidalrt_array_element_count(const tidalrt_array_t *array) {
  return array->element_count;
}

size_t tidalrt_array_byte_size(const tidalrt_array_t *array) {
  return array->byte_size;
}

void *tidalrt_array_data(tidalrt_array_t *array) { return array->data; }

const void *tidalrt_array_const_data(const tidalrt_array_t *array) {
  return array->data;
}

static int shape_matches(const tidalrt_array_t *array, size_t expected_rank,
                         const int64_t *expected_dims) {
  if (array->rank != expected_rank)
    return 0;
  for (size_t i = 0; i < expected_rank; ++i)
    if (expected_dims[i] != TIDALRT_DIM_ANY &&
        expected_dims[i] != array->dims[i])
      return 0;
  return 1;
}

tidalrt_status_t tidalrt_array_check(const tidalrt_array_t *array,
                                     const char *file, const char *input_name,
                                     tidalrt_element_type_t expected_type,
                                     size_t expected_rank,
                                     const int64_t *expected_dims) {
  if (!array || (expected_rank > 0 && !expected_dims) ||
      expected_rank > TIDALRT_MAX_RANK)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_array_check: bad arguments");
  if (array->type == expected_type &&
      shape_matches(array, expected_rank, expected_dims))
    return NULL;
  char expected[TIDALRT_SHAPE_TEXT_CAPACITY];
  char actual[TIDALRT_SHAPE_TEXT_CAPACITY];
  tidalrt_format_shape(expected, expected_rank, expected_dims);
  tidalrt_format_shape(actual, array->rank, array->dims);
  return tidalrt_status_make(
      TIDALRT_INVALID_ARGUMENT, "%s%s%s%s%s %s %s, got %s %s", file ? file : "",
      file ? ": " : "", input_name ? "input '" : "",
      input_name ? input_name : "", input_name ? "' expects" : "expected",
      tidalrt_element_type_name(expected_type), expected,
      tidalrt_element_type_name(array->type), actual);
}
