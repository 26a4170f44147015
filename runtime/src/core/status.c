/* status.c - status objects: an error code plus a heap-allocated message. */
#include "tidalrt/tidalrt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tidalrt_status_s {
  tidalrt_status_code_t code;
  /* Points into the same allocation, or at a static string for the
   * preallocated fallbacks. */
  const char *message;
};

/* Returned when a status message cannot be allocated, one per code, so that
 * an allocation failure never turns an error into success. */
static struct tidalrt_status_s fallback_statuses[] = {
    {TIDALRT_OK, ""},
    {TIDALRT_INVALID_ARGUMENT,
     "invalid argument (no memory left for the message)"},
    {TIDALRT_NOT_FOUND, "not found (no memory left for the message)"},
    {TIDALRT_IO_ERROR, "I/O error (no memory left for the message)"},
    {TIDALRT_OUT_OF_MEMORY, "out of memory"},
    {TIDALRT_UNSUPPORTED, "unsupported (no memory left for the message)"},
    {TIDALRT_INTERNAL, "internal error (no memory left for the message)"},
    {TIDALRT_UNAVAILABLE, "unavailable (no memory left for the message)"},
};

enum {
  FALLBACK_COUNT = sizeof(fallback_statuses) / sizeof(fallback_statuses[0])
};

static int is_fallback(tidalrt_status_t status) {
  return status >= &fallback_statuses[0] &&
         status < &fallback_statuses[FALLBACK_COUNT];
}

static tidalrt_status_t fallback_status(tidalrt_status_code_t code) {
  if ((int)code <= 0 || (int)code >= FALLBACK_COUNT)
    return &fallback_statuses[TIDALRT_INTERNAL];
  return &fallback_statuses[code];
}

/* Allocates a status holding the concatenation of `prefix` and the
 * formatted message; NULL if memory runs out. */
static tidalrt_status_t allocate_status(tidalrt_status_code_t code,
                                        const char *prefix, const char *format,
                                        va_list args) {
  va_list args_copy;
  va_copy(args_copy, args);
  int length = vsnprintf(NULL, 0, format, args_copy);
  va_end(args_copy);
  if (length < 0)
    length = 0;
  size_t prefix_length = prefix ? strlen(prefix) : 0;
  size_t total =
      sizeof(struct tidalrt_status_s) + prefix_length + (size_t)length + 1;
  struct tidalrt_status_s *status = malloc(total);
  if (!status)
    return NULL;
  char *text = (char *)(status + 1);
  if (prefix_length)
    memcpy(text, prefix, prefix_length);
  text[prefix_length] = '\0';
  if (length > 0)
    vsnprintf(text + prefix_length, (size_t)length + 1, format, args);
  status->code = code;
  status->message = text;
  return status;
}

tidalrt_status_t tidalrt_status_make(tidalrt_status_code_t code,
                                     const char *format, ...) {
  if (code == TIDALRT_OK)
    return NULL;
  va_list args;
  va_start(args, format);
  tidalrt_status_t status = allocate_status(code, NULL, format, args);
  va_end(args);
  return status ? status : fallback_status(code);
}

tidalrt_status_t tidalrt_status_annotate(tidalrt_status_t status,
                                         const char *format, ...) {
  if (!status)
    return NULL;
  /* Format the prefix first, then append ": " and the old message. */
  va_list args;
  va_start(args, format);
  tidalrt_status_t prefix = allocate_status(status->code, NULL, format, args);
  va_end(args);
  if (!prefix)
    return status;
  tidalrt_status_t annotated = tidalrt_status_make(
      status->code, "%s: %s", prefix->message, status->message);
  free(prefix);
  if (is_fallback(annotated))
    return status;
  tidalrt_status_free(status);
  return annotated;
}

tidalrt_status_code_t tidalrt_status_code(tidalrt_status_t status) {
  return status ? status->code : TIDALRT_OK;
}

const char *tidalrt_status_message(tidalrt_status_t status) {
  return status ? status->message : "";
}

void tidalrt_status_free(tidalrt_status_t status) {
  if (status && !is_fallback(status))
    free(status);
}

const char *tidalrt_status_code_name(tidalrt_status_code_t code) {
  switch (code) {
  case TIDALRT_OK:
    return "OK";
  case TIDALRT_INVALID_ARGUMENT:
    return "INVALID_ARGUMENT";
  case TIDALRT_NOT_FOUND:
    return "NOT_FOUND";
  case TIDALRT_IO_ERROR:
    return "IO_ERROR";
  case TIDALRT_OUT_OF_MEMORY:
    return "OUT_OF_MEMORY";
  case TIDALRT_UNSUPPORTED:
    return "UNSUPPORTED";
  case TIDALRT_INTERNAL:
    return "INTERNAL";
  case TIDALRT_UNAVAILABLE:
    return "UNAVAILABLE";
  }
  return "UNKNOWN";
}
