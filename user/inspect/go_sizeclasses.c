// SPDX-License-Identifier: BSD-3-Clause
/* go_sizeclasses.c - the Go allocator's size classes. */
#include "go_sizeclasses.h"

const uint16_t go_class_to_size[GO_NUM_SIZE_CLASSES] = {
	0, 8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208,
	224, 240, 256, 288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704,
	768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048, 2304, 2688, 3072,
	3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728,
	10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760,
	24576, 27264, 28672, 32768,
};

uint64_t go_span_elemsize(uint8_t spanclass, uint64_t npages)
{
	unsigned sizeclass = spanclass >> 1;

	if (sizeclass == 0)
		return npages * GO_PAGE_SIZE;
	if (sizeclass >= GO_NUM_SIZE_CLASSES)
		return 0;
	return go_class_to_size[sizeclass];
}
