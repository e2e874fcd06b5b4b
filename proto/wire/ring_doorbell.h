// Doorbells of the ring (ring_layout.h): client/api/doorbell.h's, in shared memory, so
// they work across processes. Thread-safe: any number of ringers and waiters.
#pragma once

#include "client/api/doorbell.h"
#include "proto/wire/ring_layout.h"

namespace accord::wire {

using accord::ring_doorbell;
using accord::wait_doorbell;

}  // namespace accord::wire
