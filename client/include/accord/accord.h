// The whole public API in one include.
#pragma once

#include "accord/access.h"
#include "accord/buffer.h"
#include "accord/builtin_kernels.h"
#include "accord/completion.h"
#include "accord/contract.h"
#include "accord/device_id.h"
#include "accord/executable_graph.h"
#include "accord/graph.h"
#include "accord/guards.h"
#include "accord/kernel.h"
#include "accord/lane.h"
#include "accord/placement.h"
#include "accord/runtime.h"
#include "accord/statistics.h"
#include "accord/status.h"
#include "accord/trace.h"
