// event.cpp - events: captures of stream work that other streams wait for.
#include "device_internal.h"

#include <new>

using namespace tidalrt_device;

tidalrt_device::event_state::~event_state() { tidalrt_status_free(failure); }

extern "C" tidalrt_status_t tidalrt_event_create(tidalrt_device_t *device,
                                                 tidalrt_event_t **out_event) {
  if (out_event)
    *out_event = nullptr;
  if (!device || !out_event)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_event_create: NULL argument");
  try {
    auto event = std::make_unique<tidalrt_event_s>();
    event->device = device;
    event->state = std::make_shared<event_state>();
    if (device->backend)
      if (tidalrt_status_t status =
              device->backend->event_create(device->native, &event->native))
        return tidalrt_status_annotate(status, "tidalrt_event_create");
    std::lock_guard<std::mutex> lock(device->mutex);
    device->events.push_back(event.get());
    *out_event = event.release();
  } catch (const std::bad_alloc &) {
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY,
                               "tidalrt_event_create: out of memory");
  }
  return nullptr;
}

extern "C" void tidalrt_event_free(tidalrt_event_t *event) {
  if (!event)
    return;
  {
    std::lock_guard<std::mutex> lock(event->device->mutex);
    auto &events = event->device->events;
    for (auto it = events.begin(); it != events.end(); ++it)
      if (*it == event) {
        events.erase(it);
        break;
      }
  }
  if (event->device->backend)
    event->device->backend->event_destroy(event->native);
  delete event; // queued records and waits keep the state alive
}

extern "C" tidalrt_status_t tidalrt_event_synchronize(tidalrt_event_t *event) {
  if (!event)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_event_synchronize: NULL event");
  if (const backend *b = event->device->backend)
    return tidalrt_status_annotate(b->event_synchronize(event->native),
                                   "tidalrt_event_synchronize");
  event_state &state = *event->state;
  std::unique_lock<std::mutex> lock(state.mutex);
  uint64_t generation = state.last_generation;
  state.changed.wait(lock,
                     [&] { return state.pending.count(generation) == 0; });
  if (state.failed.count(generation))
    return tidalrt_status_make(tidalrt_status_code(state.failure),
                               "the event's work failed: %s",
                               tidalrt_status_message(state.failure));
  return nullptr;
}

extern "C" int tidalrt_event_query(tidalrt_event_t *event) {
  if (const backend *b = event->device->backend)
    return b->event_query(event->native);
  event_state &state = *event->state;
  std::lock_guard<std::mutex> lock(state.mutex);
  return state.pending.count(state.last_generation) == 0;
}
