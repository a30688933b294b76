// Tiling struct shared by the host program and the kernel of add_custom.
#ifndef ADD_CUSTOM_TILING_H
#define ADD_CUSTOM_TILING_H
#include <cstdint>
struct AddCustomTilingData {
    uint32_t totalLength;
    uint32_t tileNum;
};
#endif
