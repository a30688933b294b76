// ascx emulator: the op-project driver. `ascx emulator build` of a folder with op_host/ and
// op_kernel/ (and no host program of its own) compiles them with a generated main that calls
// `ascx_emu::op::run` with the registered operator's name and a launcher for its kernel.
// Written for the ascx project (Apache-2.0).
//
//   ./op x=8,2048 y=8,2048 [@alpha=0.5] [mode=aiv|aic|mix]
//
// For each OpDef input `x` the driver reads input/x.bin (shape from the command line, data type
// the OpDef's first), runs the OpDef's InferShape and InferDataType (else: outputs take the
// first input's shape and the OpDef's type), then the op_host tiling function on a
// gert::TilingContext, launches the kernel with (inputs..., outputs..., workspace, tiling) on
// the blockDim and tiling key the tiling chose, and writes output/<name>.bin for each output.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../kernel_operator.h"
#include "../register/op_def_registry.h"

namespace ascx_emu {
namespace op {

[[noreturn]] inline void die(const std::string& msg) {
    std::fprintf(stderr, "ascx-emu: error: op driver: %s\n", msg.c_str());
    std::exit(2);
}

inline gert::Shape parse_shape(const std::string& name, const std::string& text) {
    gert::Shape s;
    size_t i = 0;
    while (i <= text.size()) {
        size_t j = text.find(',', i);
        if (j == std::string::npos) j = text.size();
        std::string d = text.substr(i, j - i);
        char* end = nullptr;
        long long v = std::strtoll(d.c_str(), &end, 10);
        if (d.empty() || *end || v <= 0) die("shape of `" + name + "`: `" + text + "` is not a list of positive integers (e.g. 8,2048)");
        s.AppendDim(v);
        i = j + 1;
    }
    return s;
}

inline std::vector<uint8_t> read_file(const std::string& path, size_t bytes) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) die("cannot read " + path);
    std::vector<uint8_t> data(bytes);
    size_t got = std::fread(data.data(), 1, bytes, f);
    int extra = std::fgetc(f);
    std::fclose(f);
    if (got != bytes || extra != EOF)
        die(path + " does not hold " + std::to_string(bytes) + " bytes (the shape times the data type's size)");
    return data;
}

inline void set_attr(ops::OpAttrDef& a, const std::string& v, std::vector<uint8_t>& out) {
    out = a.value;
    char* end = nullptr;
    switch (a.kind) {
        case 'f': { float x = std::strtof(v.c_str(), &end); out.resize(sizeof x); std::memcpy(out.data(), &x, sizeof x); break; }
        case 'b': { bool x = v == "1" || v == "true"; out.assign(1, x); return; }
        case 's': out.assign(v.begin(), v.end()); out.push_back(0); return;
        default: { int64_t x = std::strtoll(v.c_str(), &end, 10); out.resize(sizeof x); std::memcpy(out.data(), &x, sizeof x); break; }
    }
    if (end == nullptr || *end) die("attribute `" + a.name + "`: `" + v + "` is not a number");
}

using Launcher = void (*)(uint32_t blockDim, GM_ADDR* args);

inline int run(const char* op_name, size_t kernel_args, int argc, char** argv, Launcher launch) {
    auto it = ops::op_registry().find(op_name);
    if (it == ops::op_registry().end()) die(std::string("operator ") + op_name + " is not registered (OP_ADD)");
    std::unique_ptr<ops::OpDef> def = it->second(op_name);
    gert::OpState st;
    st.name = op_name;
    std::map<std::string, std::string> shapes, attrs;
    AscendC::KernelMode mode = AscendC::KernelMode::AIV_MODE;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        size_t eq = a.find('=');
        if (eq == std::string::npos) die("argument `" + a + "`: expected NAME=SHAPE, @ATTR=VALUE or mode=aiv|aic|mix");
        std::string k = a.substr(0, eq), v = a.substr(eq + 1);
        if (k == "mode") {
            if (v == "aiv") mode = AscendC::KernelMode::AIV_MODE;
            else if (v == "aic") mode = AscendC::KernelMode::AIC_MODE;
            else if (v == "mix") mode = AscendC::KernelMode::MIX_MODE;
            else die("mode must be aiv, aic or mix, got `" + v + "`");
        } else if (!k.empty() && k[0] == '@') attrs[k.substr(1)] = v;
        else shapes[k] = v;
    }
    for (auto& in : def->inputs) {
        gert::Tensor t;
        if (!shapes.count(in.name)) die("give the shape of input `" + in.name + "` (e.g. " + in.name + "=8,2048)");
        t.shape = gert::StorageShape(parse_shape(in.name, shapes[in.name]));
        t.dtype = in.types.empty() ? ge::DT_FLOAT : in.types[0];
        st.inputs.push_back(t);
        gert::CompileTimeTensorDesc d;
        d.dtype = t.dtype;
        st.input_desc.push_back(d);
    }
    for (auto& out : def->outputs) {
        gert::Tensor t;
        t.dtype = out.types.empty() ? ge::DT_FLOAT : out.types[0];
        if (shapes.count(out.name)) t.shape = gert::StorageShape(parse_shape(out.name, shapes[out.name]));
        else if (!st.inputs.empty()) t.shape = st.inputs[0].shape;
        st.outputs.push_back(t);
        gert::CompileTimeTensorDesc d;
        d.dtype = t.dtype;
        st.output_desc.push_back(d);
    }
    for (auto& a : def->attrs) {
        std::vector<uint8_t> v = a.value;
        if (attrs.count(a.name)) set_attr(a, attrs[a.name], v);
        else if (a.option == ops::REQUIRED) die("give the required attribute `" + a.name + "` (@" + a.name + "=VALUE)");
        st.attrs.values.push_back(v);
        attrs.erase(a.name);
    }
    if (!attrs.empty()) die("unknown attribute `" + attrs.begin()->first + "`");
    if (def->infer_shape) {
        gert::InferShapeContext ctx(st);
        if (def->infer_shape(&ctx) != ge::GRAPH_SUCCESS) die("InferShape failed");
        for (auto& o : st.outputs) o.shape = gert::StorageShape(o.shape.GetOriginShape());
    }
    if (def->infer_dtype) {
        gert::InferDataTypeContext ctx(st);
        if (def->infer_dtype(&ctx) != ge::GRAPH_SUCCESS) die("InferDataType failed");
    }
    if (!def->aicore.tiling) die(std::string(op_name) + " sets no tiling function (AICore().SetTiling)");
    gert::TilingContext tctx(st);
    if (def->aicore.tiling(&tctx) != ge::GRAPH_SUCCESS) die("the tiling function failed");
    size_t nargs = st.inputs.size() + st.outputs.size() + 2;
    if (nargs != kernel_args)
        die("the kernel takes " + std::to_string(kernel_args) + " GM_ADDR arguments, the OpDef gives " +
            std::to_string(st.inputs.size()) + " inputs + " + std::to_string(st.outputs.size()) + " outputs + workspace + tiling");
    std::vector<GM_ADDR> args;
    std::vector<size_t> bytes;
    for (size_t i = 0; i < st.inputs.size(); ++i) {
        size_t n = static_cast<size_t>(st.inputs[i].GetShapeSize()) * ge::DataTypeSize(st.inputs[i].dtype);
        std::vector<uint8_t> data = read_file("input/" + def->inputs[i].name + ".bin", n);
        GM_ADDR p = AscendC::GmAlloc(n);
        std::memcpy(p, data.data(), n);
        args.push_back(p);
    }
    for (auto& o : st.outputs) {
        bytes.push_back(static_cast<size_t>(o.GetShapeSize()) * ge::DataTypeSize(o.dtype));
        args.push_back(AscendC::GmAlloc(bytes.back()));
    }
    size_t ws = 0;
    for (size_t i = 0; i < st.workspace_num; ++i) ws += st.workspace[i];
    args.push_back(AscendC::GmAlloc(ws));
    size_t tiling_bytes = st.tiling.GetDataSize() ? st.tiling.GetDataSize() : 32;
    GM_ADDR tiling = AscendC::GmAlloc(tiling_bytes);
    std::memcpy(tiling, st.tiling.GetData(), st.tiling.GetDataSize());
    args.push_back(tiling);
    std::printf("op %s: blockDim %u, tiling key %llu, tiling %zu bytes, workspace %zu bytes\n", op_name, st.block_dim,
                static_cast<unsigned long long>(st.tiling_key), st.tiling.GetDataSize(), ws);
    ICPU_SET_TILING_KEY(st.tiling_key);
    AscendC::SetKernelMode(mode);
    launch(st.block_dim, args.data());
    for (size_t i = 0; i < st.outputs.size(); ++i) {
        std::string path = "output/" + def->outputs[i].name + ".bin";
        FILE* f = std::fopen(path.c_str(), "wb");
        if (!f || std::fwrite(args[st.inputs.size() + i], 1, bytes[i], f) != bytes[i]) die("cannot write " + path);
        std::fclose(f);
    }
    for (GM_ADDR p : args) AscendC::GmFree(p);
    return 0;
}

}  // namespace op
}  // namespace ascx_emu
