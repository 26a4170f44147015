/* npy_header.c - parsing and formatting the .npy header dictionary. */
#include "npy_header.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "tidalrt reads and writes little-endian .npy data in place"
#endif

/*===----------------------------------------------------------------------===
 * dtype strings
 *===----------------------------------------------------------------------===*/

typedef struct dtype_entry {
  char kind;
  unsigned size;
  tidalrt_element_type_t type;
} dtype_entry_t;

static const dtype_entry_t dtype_table[] = {
    {'f', 2, TIDALRT_ELEMENT_TYPE_F16}, {'f', 4, TIDALRT_ELEMENT_TYPE_F32},
    {'f', 8, TIDALRT_ELEMENT_TYPE_F64}, {'i', 1, TIDALRT_ELEMENT_TYPE_I8},
    {'i', 2, TIDALRT_ELEMENT_TYPE_I16}, {'i', 4, TIDALRT_ELEMENT_TYPE_I32},
    {'i', 8, TIDALRT_ELEMENT_TYPE_I64}, {'u', 1, TIDALRT_ELEMENT_TYPE_U8},
    {'u', 2, TIDALRT_ELEMENT_TYPE_U16}, {'u', 4, TIDALRT_ELEMENT_TYPE_U32},
    {'u', 8, TIDALRT_ELEMENT_TYPE_U64}, {'b', 1, TIDALRT_ELEMENT_TYPE_BOOL},
};

enum { DTYPE_TABLE_SIZE = sizeof(dtype_table) / sizeof(dtype_table[0]) };

static const char *const supported_dtypes =
    "float16/32/64, int8/16/32/64, uint8/16/32/64 or bool";

/* Explains dtype kinds that NumPy can store but tidal cannot use. */
static const char *describe_kind(char kind) {
  switch (kind) {
  case 'c':
    return "complex";
  case 'U':
    return "unicode string";
  case 'S':
  case 'a':
    return "byte string";
  case 'O':
    return "Python object";
  case 'M':
    return "datetime64";
  case 'm':
    return "timedelta64";
  case 'V':
    return "raw bytes/void (bfloat16 from ml_dtypes is stored so)";
  default:
    return NULL;
  }
}

static tidalrt_status_t parse_descr(const char *descr,
                                    tidalrt_element_type_t *out_type) {
  const char *p = descr;
  char order = '=';
  if (*p == '<' || *p == '>' || *p == '|' || *p == '=')
    order = *p++;
  char kind = *p ? *p++ : '\0';
  unsigned size = 0;
  int has_size = 0;
  while (*p >= '0' && *p <= '9' && size < 1000) {
    size = size * 10 + (unsigned)(*p++ - '0');
    has_size = 1;
  }
  if (has_size && *p == '\0') {
    for (int i = 0; i < DTYPE_TABLE_SIZE; ++i) {
      if (dtype_table[i].kind != kind || dtype_table[i].size != size)
        continue;
      if (order == '>' && size > 1)
        return tidalrt_status_make(
            TIDALRT_UNSUPPORTED,
            "big-endian dtype '%s' is not supported; convert it with "
            "a.astype('<%c%u')",
            descr, kind, size);
      *out_type = dtype_table[i].type;
      return NULL;
    }
  }
  const char *what = describe_kind(kind);
  return tidalrt_status_make(
      TIDALRT_UNSUPPORTED, "unsupported dtype '%s'%s%s%s; expected %s", descr,
      what ? " (" : "", what ? what : "", what ? ")" : "", supported_dtypes);
}

static const char *descr_of(tidalrt_element_type_t type) {
  switch (type) {
  case TIDALRT_ELEMENT_TYPE_F16:
    return "<f2";
  case TIDALRT_ELEMENT_TYPE_F32:
    return "<f4";
  case TIDALRT_ELEMENT_TYPE_F64:
    return "<f8";
  case TIDALRT_ELEMENT_TYPE_I8:
    return "|i1";
  case TIDALRT_ELEMENT_TYPE_I16:
    return "<i2";
  case TIDALRT_ELEMENT_TYPE_I32:
    return "<i4";
  case TIDALRT_ELEMENT_TYPE_I64:
    return "<i8";
  case TIDALRT_ELEMENT_TYPE_U8:
    return "|u1";
  case TIDALRT_ELEMENT_TYPE_U16:
    return "<u2";
  case TIDALRT_ELEMENT_TYPE_U32:
    return "<u4";
  case TIDALRT_ELEMENT_TYPE_U64:
    return "<u8";
  case TIDALRT_ELEMENT_TYPE_BOOL:
    return "|b1";
  case TIDALRT_ELEMENT_TYPE_BF16:
  case TIDALRT_ELEMENT_TYPE_INVALID:
    break;
  }
  return NULL;
}

/*===----------------------------------------------------------------------===
 * The header dictionary: a tiny parser for the Python literals np.save
 * writes (quoted strings, True/False, tuples of non-negative ints).
 *===----------------------------------------------------------------------===*/

typedef struct cursor {
  const char *p;
  const char *end;
  const char *begin;
} cursor_t;

static void skip_space(cursor_t *c) {
  while (c->p < c->end &&
         (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
    ++c->p;
}

static int peek(const cursor_t *c) {
  return c->p < c->end ? (unsigned char)*c->p : -1;
}

static tidalrt_status_t malformed(const cursor_t *c, const char *what) {
  return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                             "malformed header: %s at offset %zu", what,
                             (size_t)(c->p - c->begin));
}

/* Parses a quoted string without escapes into `out` (capacity `capacity`). */
static tidalrt_status_t parse_string(cursor_t *c, char *out, size_t capacity,
                                     const char *what) {
  int quote = peek(c);
  if (quote != '\'' && quote != '"')
    return malformed(c, what);
  ++c->p;
  size_t length = 0;
  while (c->p < c->end && *c->p != quote) {
    if (*c->p == '\\' || *c->p == '\n')
      return malformed(c, "unsupported character in string");
    if (length + 1 >= capacity)
      return malformed(c, "string too long");
    out[length++] = *c->p++;
  }
  if (c->p == c->end)
    return malformed(c, "unterminated string");
  ++c->p;
  out[length] = '\0';
  return NULL;
}

static tidalrt_status_t parse_bool(cursor_t *c, int *out_value) {
  size_t left = (size_t)(c->end - c->p);
  if (left >= 4 && memcmp(c->p, "True", 4) == 0) {
    c->p += 4;
    *out_value = 1;
    return NULL;
  }
  if (left >= 5 && memcmp(c->p, "False", 5) == 0) {
    c->p += 5;
    *out_value = 0;
    return NULL;
  }
  return malformed(c, "'fortran_order' is not True or False");
}

static tidalrt_status_t parse_dim(cursor_t *c, int64_t *out_dim) {
  int negative = 0;
  if (peek(c) == '-') {
    negative = 1;
    ++c->p;
    skip_space(c);
  }
  if (peek(c) < '0' || peek(c) > '9')
    return malformed(c, "'shape' is not a tuple of integers");
  uint64_t value = 0;
  int overflow = 0;
  while (peek(c) >= '0' && peek(c) <= '9') {
    unsigned digit = (unsigned)(*c->p++ - '0');
    if (value > ((uint64_t)INT64_MAX - digit) / 10)
      overflow = 1;
    else
      value = value * 10 + digit;
  }
  if (peek(c) == 'L') /* Python 2 long, as old NumPy wrote it */
    ++c->p;
  if (overflow)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "shape dimension overflows int64");
  if (negative && value != 0)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "negative dimension -%" PRIu64 " in shape",
                               value);
  *out_dim = (int64_t)value;
  return NULL;
}

/* A Python tuple: "()", "(3,)", "(2, 3)" or "(2, 3,)"; "(3)" is an int. */
static tidalrt_status_t parse_shape(cursor_t *c, tidalrt_npy_header_t *h) {
  if (peek(c) != '(')
    return malformed(c, "'shape' is not a tuple of integers");
  ++c->p;
  size_t rank = 0;
  int saw_comma = 0;
  for (;;) {
    skip_space(c);
    if (peek(c) == ')') {
      ++c->p;
      break;
    }
    if (rank >= TIDALRT_MAX_RANK)
      return tidalrt_status_make(TIDALRT_UNSUPPORTED,
                                 "shape has more than %d dimensions",
                                 TIDALRT_MAX_RANK);
    tidalrt_status_t status = parse_dim(c, &h->dims[rank]);
    if (status)
      return status;
    ++rank;
    skip_space(c);
    if (peek(c) == ',') {
      ++c->p;
      saw_comma = 1;
    } else if (peek(c) != ')') {
      return malformed(c, "expected ',' or ')' in 'shape'");
    }
  }
  if (rank == 1 && !saw_comma)
    return malformed(c, "'shape' is not a tuple of integers");
  h->rank = rank;
  return NULL;
}

tidalrt_status_t tidalrt_npy_parse_header(const char *text, size_t length,
                                          tidalrt_npy_header_t *out_header) {
  cursor_t cursor = {text, text + length, text};
  cursor_t *c = &cursor;
  tidalrt_npy_header_t header;
  memset(&header, 0, sizeof(header));
  char descr[64] = "";
  int fortran_order = 0;
  int seen_descr = 0, seen_fortran = 0, seen_shape = 0;
  tidalrt_status_t status = NULL;

  skip_space(c);
  if (peek(c) != '{')
    return malformed(c, "expected '{'");
  ++c->p;
  for (;;) {
    skip_space(c);
    if (peek(c) == '}') {
      ++c->p;
      break;
    }
    char key[32];
    if ((status = parse_string(c, key, sizeof(key), "expected a quoted key")))
      return status;
    skip_space(c);
    if (peek(c) != ':')
      return malformed(c, "expected ':'");
    ++c->p;
    skip_space(c);
    int *seen;
    if (strcmp(key, "descr") == 0) {
      seen = &seen_descr;
      if (peek(c) == '[')
        return tidalrt_status_make(TIDALRT_UNSUPPORTED,
                                   "structured dtypes are not supported; "
                                   "expected %s",
                                   supported_dtypes);
      status = parse_string(c, descr, sizeof(descr),
                            "'descr' is not a quoted dtype string");
    } else if (strcmp(key, "fortran_order") == 0) {
      seen = &seen_fortran;
      status = parse_bool(c, &fortran_order);
    } else if (strcmp(key, "shape") == 0) {
      seen = &seen_shape;
      status = parse_shape(c, &header);
    } else {
      return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                                 "malformed header: unexpected key '%s'", key);
    }
    if (status)
      return status;
    if (*seen)
      return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                                 "malformed header: duplicate key '%s'", key);
    *seen = 1;
    skip_space(c);
    if (peek(c) == ',')
      ++c->p;
    else if (peek(c) != '}')
      return malformed(c, "expected ',' or '}'");
  }
  skip_space(c);
  if (c->p != c->end)
    return malformed(c, "unexpected text after the dictionary");
  if (!seen_descr || !seen_fortran || !seen_shape)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "malformed header: missing key '%s'",
                               !seen_descr     ? "descr"
                               : !seen_fortran ? "fortran_order"
                                               : "shape");
  if ((status = parse_descr(descr, &header.type)))
    return status;
  if (fortran_order)
    return tidalrt_status_make(
        TIDALRT_UNSUPPORTED,
        "fortran_order=True (column-major) arrays are not supported; save "
        "np.ascontiguousarray(a) instead");
  *out_header = header;
  return NULL;
}

/*===----------------------------------------------------------------------===
 * Writing
 *===----------------------------------------------------------------------===*/

/* np.save's layout (NumPy >= 1.23): the dictionary with keys in sorted
 * order, room for the first dimension to grow to 21 digits, spaces to a
 * multiple of 64 bytes and a newline. */
size_t tidalrt_npy_format_preamble(char *buffer, tidalrt_element_type_t type,
                                   size_t rank, const int64_t *dims) {
  enum { ALIGNMENT = 64, PREFIX_LENGTH = 10, GROWTH_DIGITS = 21 };
  const char *descr = descr_of(type);
  if (!descr || rank > TIDALRT_MAX_RANK)
    return 0;
  char *dict = buffer + PREFIX_LENGTH;
  size_t capacity = TIDALRT_NPY_MAX_PREAMBLE_LENGTH - PREFIX_LENGTH;
  size_t used = (size_t)snprintf(
      dict, capacity, "{'descr': '%s', 'fortran_order': False, 'shape': (",
      descr);
  for (size_t i = 0; i < rank; ++i)
    used += (size_t)snprintf(dict + used, capacity - used, "%s%" PRId64,
                             i ? ", " : "", dims[i]);
  used += (size_t)snprintf(dict + used, capacity - used, "%s), }",
                           rank == 1 ? "," : "");
  if (rank > 0) {
    int digits = snprintf(NULL, 0, "%" PRId64, dims[0]);
    for (int i = digits; i < GROWTH_DIGITS; ++i)
      dict[used++] = ' ';
  }
  /* The newline counts towards the length; a full pad is used when the
   * text is already aligned, as NumPy does. */
  size_t pad = ALIGNMENT - (PREFIX_LENGTH + used + 1) % ALIGNMENT;
  memset(dict + used, ' ', pad);
  used += pad;
  dict[used++] = '\n';
  memcpy(buffer, TIDALRT_NPY_MAGIC, TIDALRT_NPY_MAGIC_LENGTH);
  buffer[6] = 1; /* version 1.0 */
  buffer[7] = 0;
  buffer[8] = (char)(used & 0xff);
  buffer[9] = (char)(used >> 8);
  return PREFIX_LENGTH + used;
}
