/* npy_header.h - parsing and formatting the .npy header dictionary. */
#ifndef TIDALRT_SRC_CORE_NPY_HEADER_H
#define TIDALRT_SRC_CORE_NPY_HEADER_H

#include "tidalrt/tidalrt.h"

/* The 6-byte magic string that starts every .npy file. */
#define TIDALRT_NPY_MAGIC "\x93NUMPY"
#define TIDALRT_NPY_MAGIC_LENGTH 6

/* The largest header this runtime accepts. NumPy's reader refuses more than
 * 10,000 bytes by default; rank-64 shapes need under 2 KiB. */
#define TIDALRT_NPY_MAX_HEADER_LENGTH (1u << 20)

typedef struct tidalrt_npy_header {
  tidalrt_element_type_t type;
  size_t rank;
  int64_t dims[TIDALRT_MAX_RANK];
} tidalrt_npy_header_t;

/* Parses the Python-literal dictionary of a .npy header (`length` bytes, not
 * NUL-terminated), e.g.
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (10, 784), }
 * followed by padding. Messages carry no file prefix. */
tidalrt_status_t tidalrt_npy_parse_header(const char *text, size_t length,
                                          tidalrt_npy_header_t *out_header);

/* Formats the complete preamble (magic, version 1.0, header length and the
 * dictionary padded to a multiple of 64 bytes) exactly as NumPy's np.save
 * does. `buffer` must hold TIDALRT_NPY_MAX_PREAMBLE_LENGTH bytes; returns
 * the preamble length, or 0 if `type` has no .npy dtype. */
#define TIDALRT_NPY_MAX_PREAMBLE_LENGTH (TIDALRT_MAX_RANK * 22 + 256)
size_t tidalrt_npy_format_preamble(char *buffer, tidalrt_element_type_t type,
                                   size_t rank, const int64_t *dims);

#endif /* TIDALRT_SRC_CORE_NPY_HEADER_H */
