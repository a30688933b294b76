// ascx emulator: stand-in for the op-project host header (`register/op_def_registry.h`): the
// operator definition (`ops::OpDef`, `OP_ADD`), the tiling context an op_host tiling function
// receives (`gert::TilingContext`) and the shape-inference contexts, written from the public
// operator-development guide. Clean-room (Apache-2.0).
//
// What is modelled: an OpDef records its inputs, outputs (name, first data type), attributes
// (name, default) and the functions set on it; `OP_ADD` registers it by name, so the op-project
// driver (`ascx_emu/op_driver.h`) can build one, call its InferShape / InferDataType / tiling
// function with real shapes, and launch the kernel with the tiling it produced. Compile-time
// configuration (formats, AddConfig flags, check-support) is accepted and ignored.
#pragma once
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../ascx_emu/ge_types.h"
#include "../securec.h"
#include "../tiling/platform/platform_ascendc.h"
#include "tilingdata_base.h"

namespace ge {
using graphStatus = uint32_t;
constexpr graphStatus GRAPH_SUCCESS = 0;
constexpr graphStatus GRAPH_FAILED = 0xFFFFFFFF;
class AscendString {
public:
    AscendString(const char* s = "") : s_(s ? s : "") {}
    const char* GetString() const { return s_.c_str(); }

private:
    std::string s_;
};
class Operator {};
}  // namespace ge

namespace gert {
class Shape {
public:
    Shape() = default;
    Shape(std::initializer_list<int64_t> d) : dims_(d) {}
    explicit Shape(const std::vector<int64_t>& d) : dims_(d) {}
    size_t GetDimNum() const { return dims_.size(); }
    int64_t GetDim(size_t i) const { return i < dims_.size() ? dims_[i] : 0; }
    void SetDimNum(size_t n) { dims_.resize(n, 0); }
    void SetDim(size_t i, int64_t v) { if (i < dims_.size()) dims_[i] = v; }
    Shape& AppendDim(int64_t v) { dims_.push_back(v); return *this; }
    int64_t GetShapeSize() const {
        int64_t n = 1;
        for (int64_t d : dims_) n *= d;
        return n;
    }
    bool operator==(const Shape& o) const { return dims_ == o.dims_; }
    const int64_t& operator[](size_t i) const { return dims_[i]; }
    int64_t& operator[](size_t i) { return dims_[i]; }

private:
    std::vector<int64_t> dims_;
};
class StorageShape {
public:
    StorageShape() = default;
    explicit StorageShape(const Shape& s) : origin_(s), storage_(s) {}
    const Shape& GetOriginShape() const { return origin_; }
    const Shape& GetStorageShape() const { return storage_; }
    Shape& MutableOriginShape() { return origin_; }
    Shape& MutableStorageShape() { return storage_; }
    int64_t GetShapeSize() const { return storage_.GetShapeSize(); }
    size_t GetDimNum() const { return storage_.GetDimNum(); }
    int64_t GetDim(size_t i) const { return storage_.GetDim(i); }

private:
    Shape origin_, storage_;
};
class Tensor {
public:
    StorageShape shape;
    ge::DataType dtype = ge::DT_UNDEFINED;
    const Shape& GetOriginShape() const { return shape.GetOriginShape(); }
    const Shape& GetStorageShape() const { return shape.GetStorageShape(); }
    int64_t GetShapeSize() const { return shape.GetShapeSize(); }
    ge::DataType GetDataType() const { return dtype; }
};
class CompileTimeTensorDesc {
public:
    ge::DataType dtype = ge::DT_UNDEFINED;
    ge::DataType GetDataType() const { return dtype; }
    ge::Format GetOriginFormat() const { return ge::FORMAT_ND; }
    ge::Format GetStorageFormat() const { return ge::FORMAT_ND; }
};
// Attribute values by index, in the order the OpDef declared them.
class RuntimeAttrs {
public:
    std::vector<std::vector<uint8_t>> values;
    template <typename T> const T* GetAttrPointer(size_t i) const {
        return i < values.size() && values[i].size() >= sizeof(T) ? reinterpret_cast<const T*>(values[i].data()) : nullptr;
    }
    const int64_t* GetInt(size_t i) const { return GetAttrPointer<int64_t>(i); }
    const float* GetFloat(size_t i) const { return GetAttrPointer<float>(i); }
    const bool* GetBool(size_t i) const { return GetAttrPointer<bool>(i); }
    const char* GetStr(size_t i) const { return i < values.size() ? reinterpret_cast<const char*>(values[i].data()) : nullptr; }
    size_t GetAttrNum() const { return values.size(); }
};
class TilingData {
public:
    explicit TilingData(size_t capacity) : buf_(capacity, 0) {}
    void* GetData() { return buf_.data(); }
    size_t GetCapacity() const { return buf_.size(); }
    void SetDataSize(size_t n) { size_ = n; }
    size_t GetDataSize() const { return size_; }

private:
    std::vector<uint8_t> buf_;
    size_t size_ = 0;
};
// What the contexts below read and write; filled by the op driver.
struct OpState {
    std::vector<Tensor> inputs, outputs;
    std::vector<CompileTimeTensorDesc> input_desc, output_desc;
    RuntimeAttrs attrs;
    uint32_t block_dim = 1;
    uint64_t tiling_key = 0;
    TilingData tiling{64 * 1024};
    std::vector<size_t> workspace = std::vector<size_t>(16, 0);
    size_t workspace_num = 0;
    std::string name;
};
class ContextBase {
public:
    explicit ContextBase(OpState& s) : s_(s) {}
    const StorageShape* GetInputShape(size_t i) const { return i < s_.inputs.size() ? &s_.inputs[i].shape : nullptr; }
    const Tensor* GetInputTensor(size_t i) const { return i < s_.inputs.size() ? &s_.inputs[i] : nullptr; }
    const Tensor* GetOptionalInputTensor(size_t i) const { return GetInputTensor(i); }
    const StorageShape* GetOptionalInputShape(size_t i) const { return GetInputShape(i); }
    const CompileTimeTensorDesc* GetInputDesc(size_t i) const { return i < s_.input_desc.size() ? &s_.input_desc[i] : nullptr; }
    const CompileTimeTensorDesc* GetOutputDesc(size_t i) const { return i < s_.output_desc.size() ? &s_.output_desc[i] : nullptr; }
    const RuntimeAttrs* GetAttrs() const { return &s_.attrs; }
    const char* GetNodeName() const { return s_.name.c_str(); }
    const char* GetNodeType() const { return s_.name.c_str(); }
    size_t GetComputeNodeInputNum() const { return s_.inputs.size(); }

protected:
    OpState& s_;
};
class TilingContext : public ContextBase {
public:
    using ContextBase::ContextBase;
    const StorageShape* GetOutputShape(size_t i) const { return i < s_.outputs.size() ? &s_.outputs[i].shape : nullptr; }
    ge::graphStatus SetBlockDim(uint32_t n) { s_.block_dim = n; return ge::GRAPH_SUCCESS; }
    uint32_t GetBlockDim() const { return s_.block_dim; }
    ge::graphStatus SetTilingKey(uint64_t k) { s_.tiling_key = k; return ge::GRAPH_SUCCESS; }
    uint64_t GetTilingKey() const { return s_.tiling_key; }
    TilingData* GetRawTilingData() { return &s_.tiling; }
    size_t* GetWorkspaceSizes(size_t n) {
        if (n > s_.workspace.size()) s_.workspace.resize(n, 0);
        s_.workspace_num = n > s_.workspace_num ? n : s_.workspace_num;
        return s_.workspace.data();
    }
    size_t GetWorkspaceNum() const { return s_.workspace_num; }
    const void* GetPlatformInfo() const { return nullptr; }  // platform_ascendc reads the target table
    ge::graphStatus SetScheduleMode(uint32_t) { return ge::GRAPH_SUCCESS; }
    template <typename T> const T* GetCompileInfo() const { return nullptr; }
};
class InferShapeContext : public ContextBase {
public:
    using ContextBase::ContextBase;
    Shape* GetOutputShape(size_t i) { return i < s_.outputs.size() ? &s_.outputs[i].shape.MutableOriginShape() : nullptr; }
    const Shape* GetInputShape(size_t i) const { return i < s_.inputs.size() ? &s_.inputs[i].shape.GetOriginShape() : nullptr; }
    const Tensor* GetInputTensor(size_t i) const { return ContextBase::GetInputTensor(i); }
};
class InferDataTypeContext : public ContextBase {
public:
    using ContextBase::ContextBase;
    ge::DataType GetInputDataType(size_t i) const { return i < s_.inputs.size() ? s_.inputs[i].dtype : ge::DT_UNDEFINED; }
    ge::graphStatus SetOutputDataType(size_t i, ge::DataType t) {
        if (i < s_.outputs.size()) s_.outputs[i].dtype = t;
        return ge::GRAPH_SUCCESS;
    }
};
class InferShapeRangeContext : public ContextBase {
public:
    using ContextBase::ContextBase;
};
class TilingParseContext : public ContextBase {
public:
    using ContextBase::ContextBase;
};
}  // namespace gert

namespace ops {
enum Option { REQUIRED = 0, OPTIONAL, DYNAMIC };
using ge::DataType;
using ge::Format;
class OpParamDef {
public:
    explicit OpParamDef(const char* n) : name(n) {}
    OpParamDef& ParamType(Option o) { option = o; return *this; }
    OpParamDef& DataType(std::vector<ge::DataType> t) { types = std::move(t); return *this; }
    OpParamDef& DataTypeList(std::vector<ge::DataType> t) { return DataType(std::move(t)); }
    OpParamDef& Format(std::vector<ge::Format>) { return *this; }
    OpParamDef& FormatList(std::vector<ge::Format>) { return *this; }
    OpParamDef& UnknownShapeFormat(std::vector<ge::Format>) { return *this; }
    OpParamDef& AutoContiguous() { return *this; }
    OpParamDef& ValueDepend(Option) { return *this; }
    OpParamDef& IgnoreContiguous() { return *this; }
    OpParamDef& Scalar() { return *this; }
    OpParamDef& ScalarList() { return *this; }
    OpParamDef& InitValue(uint64_t) { return *this; }
    std::string name;
    Option option = REQUIRED;
    std::vector<ge::DataType> types;
};
class OpAttrDef {
public:
    explicit OpAttrDef(const char* n) : name(n) {}
    OpAttrDef& AttrType(Option o) { option = o; return *this; }
    template <typename T> OpAttrDef& set(T v, char k) {
        kind = k;
        value.resize(sizeof(T));
        std::memcpy(value.data(), &v, sizeof(T));
        return *this;
    }
    OpAttrDef& Float(float v) { return set(v, 'f'); }
    OpAttrDef& Int(int64_t v) { return set(v, 'i'); }
    OpAttrDef& Bool(bool v) { return set(v, 'b'); }
    OpAttrDef& String(const char* v) {
        kind = 's';
        value.assign(v, v + std::strlen(v) + 1);
        return *this;
    }
    OpAttrDef& ListInt(std::vector<int64_t> v) {
        kind = 'l';
        value.resize(v.size() * sizeof(int64_t));
        if (!v.empty()) std::memcpy(value.data(), v.data(), value.size());
        return *this;
    }
    std::string name;
    Option option = OPTIONAL;
    std::vector<uint8_t> value;
    char kind = 'i';  // f(loat) i(nt) b(ool) s(tring) l(ist of int)
};
class OpAICoreConfig {
public:
#define ASCX_EMU_CFG_FLAG(n) OpAICoreConfig& n(bool) { return *this; }
    ASCX_EMU_CFG_FLAG(AsyncFlag) ASCX_EMU_CFG_FLAG(DynamicCompileStaticFlag) ASCX_EMU_CFG_FLAG(DynamicFormatFlag)
    ASCX_EMU_CFG_FLAG(DynamicRankSupportFlag) ASCX_EMU_CFG_FLAG(DynamicShapeSupportFlag) ASCX_EMU_CFG_FLAG(NeedCheckSupportFlag)
    ASCX_EMU_CFG_FLAG(PrecisionReduceFlag)
#undef ASCX_EMU_CFG_FLAG
    OpAICoreConfig& RangeLimitValue(const char*) { return *this; }
    OpAICoreConfig& ExtendCfgInfo(const char*, const char*) { return *this; }
    OpParamDef& Input(const char* n) { params.emplace_back(n); return params.back(); }
    OpParamDef& Output(const char* n) { params.emplace_back(n); return params.back(); }
    std::vector<OpParamDef> params;
};
using TilingFn = ge::graphStatus (*)(gert::TilingContext*);
class OpAICoreDef {
public:
    template <typename F> OpAICoreDef& SetTiling(F f) { tiling = f; return *this; }
    template <typename F> OpAICoreDef& SetTilingParse(F) { return *this; }
    template <typename F> OpAICoreDef& SetCheckSupport(F) { return *this; }
    template <typename F> OpAICoreDef& SetOpSelectFormat(F) { return *this; }
    OpAICoreDef& AddConfig(const char*) { return *this; }
    OpAICoreDef& AddConfig(const char*, OpAICoreConfig&) { return *this; }
    TilingFn tiling = nullptr;
};
class OpDef {
public:
    explicit OpDef(const char* n) : name_(n) {}
    virtual ~OpDef() = default;
    OpParamDef& Input(const char* n) { inputs.emplace_back(n); return inputs.back(); }
    OpParamDef& Output(const char* n) { outputs.emplace_back(n); return outputs.back(); }
    OpAttrDef& Attr(const char* n) { attrs.emplace_back(n); return attrs.back(); }
    template <typename F> OpDef& SetInferShape(F f) { infer_shape = f; return *this; }
    template <typename F> OpDef& SetInferShapeRange(F) { return *this; }
    template <typename F> OpDef& SetInferDataType(F f) { infer_dtype = f; return *this; }
    OpAICoreDef& AICore() { return aicore; }
    OpDef& MC2() { return *this; }
    const std::string& name() const { return name_; }
    std::vector<OpParamDef> inputs, outputs;  // deque-like use: references stay valid while chaining one call
    std::vector<OpAttrDef> attrs;
    ge::graphStatus (*infer_shape)(gert::InferShapeContext*) = nullptr;
    ge::graphStatus (*infer_dtype)(gert::InferDataTypeContext*) = nullptr;
    OpAICoreDef aicore;

private:
    std::string name_;
};
using OpFactory = std::function<std::unique_ptr<OpDef>(const char*)>;
inline std::map<std::string, OpFactory>& op_registry() {
    static std::map<std::string, OpFactory> r;
    return r;
}
struct OpRegistrar {
    OpRegistrar(const char* name, OpFactory f) { op_registry()[name] = std::move(f); }
};
}  // namespace ops

// OP_ADD(Name[, CompileInfo]): register the OpDef subclass `Name` under its own name.
#define OP_ADD(name, ...) \
    static ::ops::OpRegistrar ascx_emu_op_registrar_##name(#name, [](const char* n) { return std::unique_ptr<::ops::OpDef>(new name(n)); })
