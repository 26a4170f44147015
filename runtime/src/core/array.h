/* array.h - runtime-internal helpers shared by the array and .npy code. */
#ifndef TIDALRT_SRC_CORE_ARRAY_H
#define TIDALRT_SRC_CORE_ARRAY_H

#include "tidalrt/tidalrt.h"

/* Enough for "[" + TIDALRT_MAX_RANK dims of up to 20 characters each,
 * separated by ", ", + "]". */
#define TIDALRT_SHAPE_TEXT_CAPACITY (TIDALRT_MAX_RANK * 22 + 3)

/* Writes the shape as "[10, 784]" (TIDALRT_DIM_ANY as "*") into `buffer`,
 * which holds TIDALRT_SHAPE_TEXT_CAPACITY bytes. */
void tidalrt_format_shape(char *buffer, size_t rank, const int64_t *dims);

/* Computes the element count and byte size of a shape, failing with
 * INVALID_ARGUMENT on a negative dimension or a size that overflows size_t.
 * Messages carry no file prefix. */
tidalrt_status_t tidalrt_shape_sizes(tidalrt_element_type_t type, size_t rank,
                                     const int64_t *dims,
                                     size_t *out_element_count,
                                     size_t *out_byte_size);

/* tidalrt_array_create without zero-filling the data. */
tidalrt_status_t tidalrt_array_allocate(tidalrt_element_type_t type,
                                        size_t rank, const int64_t *dims,
                                        tidalrt_array_t **out_array);

/* An array whose data is `data`, inside the read-only mapping `mapping` of
 * `mapping_size` bytes, which tidalrt_array_free unmaps. The array must
 * not be written through. */
tidalrt_status_t tidalrt_array_wrap_mapping(tidalrt_element_type_t type,
                                            size_t rank, const int64_t *dims,
                                            void *data, void *mapping,
                                            size_t mapping_size,
                                            tidalrt_array_t **out_array);

#endif /* TIDALRT_SRC_CORE_ARRAY_H */
