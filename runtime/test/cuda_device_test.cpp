// cuda_device_test.cpp - the CUDA device (being written).
#include "cuda_test_util.h"

TEST(CudaDevice, Placeholder) { TIDALRT_REQUIRE_GPU(); }
