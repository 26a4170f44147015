/* element_type.c - sizes and NumPy names of tensor element types. */
#include "tidalrt/tidalrt.h"

size_t tidalrt_element_type_size(tidalrt_element_type_t type) {
  switch (type) {
  case TIDALRT_ELEMENT_TYPE_U8:
  case TIDALRT_ELEMENT_TYPE_I8:
  case TIDALRT_ELEMENT_TYPE_BOOL:
    return 1;
  case TIDALRT_ELEMENT_TYPE_U16:
  case TIDALRT_ELEMENT_TYPE_I16:
  case TIDALRT_ELEMENT_TYPE_F16:
  case TIDALRT_ELEMENT_TYPE_BF16:
    return 2;
  case TIDALRT_ELEMENT_TYPE_F32:
  case TIDALRT_ELEMENT_TYPE_I32:
  case TIDALRT_ELEMENT_TYPE_U32:
    return 4;
  case TIDALRT_ELEMENT_TYPE_F64:
  case TIDALRT_ELEMENT_TYPE_I64:
  case TIDALRT_ELEMENT_TYPE_U64:
    return 8;
  case TIDALRT_ELEMENT_TYPE_INVALID:
    break;
  }
  return 0;
}

const char *tidalrt_element_type_name(tidalrt_element_type_t type) {
  switch (type) {
  case TIDALRT_ELEMENT_TYPE_F32:
    return "float32";
  case TIDALRT_ELEMENT_TYPE_U8:
    return "uint8";
  case TIDALRT_ELEMENT_TYPE_I8:
    return "int8";
  case TIDALRT_ELEMENT_TYPE_U16:
    return "uint16";
  case TIDALRT_ELEMENT_TYPE_I16:
    return "int16";
  case TIDALRT_ELEMENT_TYPE_I32:
    return "int32";
  case TIDALRT_ELEMENT_TYPE_I64:
    return "int64";
  case TIDALRT_ELEMENT_TYPE_BOOL:
    return "bool";
  case TIDALRT_ELEMENT_TYPE_F16:
    return "float16";
  case TIDALRT_ELEMENT_TYPE_F64:
    return "float64";
  case TIDALRT_ELEMENT_TYPE_U32:
    return "uint32";
  case TIDALRT_ELEMENT_TYPE_U64:
    return "uint64";
  case TIDALRT_ELEMENT_TYPE_BF16:
    return "bfloat16";
  case TIDALRT_ELEMENT_TYPE_INVALID:
    break;
  }
  return "invalid";
}
