// ascx emulator: `ListTensorDesc` / `TensorDesc<T>` (the kernel side of a dynamic list of
// tensors), written from the public API pages "ListTensorDesc" and "TensorDesc" (Atlas A2/A3).
// Clean-room (Apache-2.0).
//
// The GM layout they parse, in 64-bit words (the pages' figure: two 3-d tensors):
//     word 0                byte offset of the pointer list (72 for the figure)
//     per tensor i          (index i << 32) | dim, then its dim shape values
//     at the offset         the tensors' data pointers, one per tensor
// `GetDesc` writes the tensor's shape (dim words, as the TensorDesc page says: "the shape
// information is written to that address") into the address given by
// `TensorDesc::SetShapeAddr`, which GetShape then reads; GetDim / GetIndex keep the (index, dim)
// word in the TensorDesc itself (the public AddN sample gives a buffer of exactly dim words).
// Each word read is a scalar GM access on the timing model (S.gm_access).
#pragma once
#include <cstdint>

#include "ops.h"

namespace AscendC {

template <class T> class TensorDesc {
public:
    TensorDesc() = default;
    ~TensorDesc() = default;
    void SetShapeAddr(uint64_t* shapePtr) { shape_ = shapePtr; }
    uint64_t GetDim(ASCX_LOC) { return head("TensorDesc::GetDim", loc) & 0xffffffffull; }
    uint64_t GetIndex(ASCX_LOC) { return head("TensorDesc::GetIndex", loc) >> 32; }
    uint64_t GetShape(uint32_t offset, ASCX_LOC) {
        const uint64_t dim = head("TensorDesc::GetShape", loc) & 0xffffffffull;
        if (offset >= dim)
            ascx_emu::fail("TensorDesc::GetShape", loc, "dimension %u of a %llu-d tensor", offset, static_cast<unsigned long long>(dim));
        return shape_[offset];
    }
    T* GetDataPtr() { return data_; }
    GlobalTensor<T> GetDataObj(ASCX_LOC) {
        const uint64_t dim = head("TensorDesc::GetDataObj", loc) & 0xffffffffull;
        uint64_t n = 1;
        for (uint64_t i = 0; i < dim; ++i) n *= shape_[i];
        GlobalTensor<T> g;
        g.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(data_), n);
        return g;
    }
    // (ListTensorDesc::GetDesc fills these.)
    uint64_t* shape_addr_() const { return shape_; }
    void set_desc_(uint64_t headWord, T* p) { head_ = headWord, data_ = p, filled_ = true; }

private:
    uint64_t head(const char* api, ascx_emu::SrcLoc loc) const {
        if (!shape_ || !filled_) ascx_emu::fail(api, loc, "TensorDesc: call SetShapeAddr and ListTensorDesc::GetDesc first");
        return head_;
    }
    uint64_t* shape_ = nullptr;
    uint64_t head_ = 0;
    bool filled_ = false;
    T* data_ = nullptr;
};

class ListTensorDesc {
public:
    ListTensorDesc() = default;
    ListTensorDesc(__gm__ void* data, uint32_t length = 0xffffffff, uint32_t shapeSize = 0xffffffff, ASCX_LOC) {
        Init(data, length, shapeSize, loc);
    }
    // length (bytes of the layout) and shapeSize (number of pointers) are checked when given.
    void Init(__gm__ void* data, uint32_t length = 0xffffffff, uint32_t shapeSize = 0xffffffff, ASCX_LOC) {
        const char* api = "ListTensorDesc::Init";
        if (data == nullptr) ascx_emu::fail(api, loc, "the list's GM address is null");
        base_ = reinterpret_cast<const uint64_t*>(data);
        const uint64_t off = read(0, api, loc);
        if (off % 8 != 0 || off < 8) ascx_emu::fail(api, loc, "pointer-list offset %llu is not a multiple of 8 B past word 0",
                                                 static_cast<unsigned long long>(off));
        ptrs_ = off / 8;
        count_ = 0;
        uint64_t w = 1;
        for (; w < ptrs_; ++count_) w += 1 + (read(w, api, loc) & 0xffffffffull);
        if (w != ptrs_)
            ascx_emu::fail(api, loc, "the shape records end at byte %llu, past the pointer list at byte %llu",
                           static_cast<unsigned long long>(8 * w), static_cast<unsigned long long>(off));
        if (length != 0xffffffffu && off + 8 * count_ > length)
            ascx_emu::fail(api, loc, "the layout needs %llu bytes (%u tensors), length is %u",
                           static_cast<unsigned long long>(off + 8 * count_), count_, length);
        if (shapeSize != 0xffffffffu && shapeSize != count_)
            ascx_emu::fail(api, loc, "the layout holds %u data pointers, shapeSize says %u", count_, shapeSize);
    }
    uint32_t GetSize() const { return count_; }
    template <class T> T* GetDataPtr(uint32_t index, ASCX_LOC) {
        const char* api = "ListTensorDesc::GetDataPtr";
        check(index, api, loc);
        return reinterpret_cast<T*>(static_cast<uintptr_t>(read(ptrs_ + index, api, loc)));
    }
    template <class T> void GetDesc(TensorDesc<T>& desc, uint32_t index, ASCX_LOC) {
        const char* api = "ListTensorDesc::GetDesc";
        check(index, api, loc);
        uint64_t w = 1;
        for (uint32_t i = 0; i < index; ++i) w += 1 + (read(w, api, loc) & 0xffffffffull);
        uint64_t* out = desc.shape_addr_();
        if (!out) ascx_emu::fail(api, loc, "call TensorDesc::SetShapeAddr first (GetDesc writes the shape there)");
        const uint64_t head = read(w, api, loc);
        for (uint64_t k = 0; k < (head & 0xffffffffull); ++k) out[k] = read(w + 1 + k, api, loc);
        desc.set_desc_(head, GetDataPtr<T>(index, loc));
    }

private:
    uint64_t read(uint64_t word, const char* api, ascx_emu::SrcLoc loc) const {
        auto& c = ascx_emu::core(api, loc);
        ascx_emu::account(c, PIPE_S, api, loc, ascx_emu::scalar_cost(ascx_emu::tm::S_GM));
        return base_[word];
    }
    void check(uint32_t index, const char* api, ascx_emu::SrcLoc loc) const {
        if (!base_) ascx_emu::fail(api, loc, "ListTensorDesc used before Init");
        if (index >= count_) ascx_emu::fail(api, loc, "index %u of a list of %u tensors", index, count_);
    }
    const uint64_t* base_ = nullptr;
    uint64_t ptrs_ = 0;
    uint32_t count_ = 0;
};

}  // namespace AscendC
