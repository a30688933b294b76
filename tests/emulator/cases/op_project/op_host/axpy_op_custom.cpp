// Host side of AxpyOpCustom in the public op-project layout: the OpDef, InferShape and the
// tiling function (blockDim from the platform's vector core count, alpha from the attribute,
// tiling key 1 for lengths that split into whole tiles, key 2 with its own class otherwise).
#include "axpy_op_custom_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext *context)
{
    AxpyOpTilingData tiling;
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    const uint32_t total = context->GetInputShape(0)->GetOriginShape().GetShapeSize();
    const uint32_t cores = platform.GetCoreNumAiv();
    const uint32_t blocks = cores < 8 ? cores : 8;
    context->SetBlockDim(blocks);
    tiling.set_totalLength(total);
    tiling.set_tileLength(total / blocks / 2);
    const float *alpha = context->GetAttrs()->GetAttrPointer<float>(0);
    tiling.set_alpha(*alpha);
    uint32_t pad[2] = {7, 9};
    uint32_t copy[2] = {0, 0};
    if (memcpy_s(copy, sizeof(copy), pad, sizeof(pad)) != EOK) return ge::GRAPH_FAILED;
    tiling.set_pad(copy);
    if (total % (blocks * 2 * 16) == 0) {
        context->SetTilingKey(1);
        tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
        context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    } else {  // key 2 and its own tiling class (REGISTER_TILING_DATA_CLASS(AxpyOpCustom_2, ...))
        AxpyOpKey2TilingData key2;
        key2.set_fill(*alpha + 1.0f);
        context->SetTilingKey(2);
        key2.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
        context->GetRawTilingData()->SetDataSize(key2.GetDataSize());
    }
    size_t *workspace = context->GetWorkspaceSizes(1);
    workspace[0] = 1024;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ge {
static graphStatus InferShape(gert::InferShapeContext *context)
{
    *context->GetOutputShape(0) = *context->GetInputShape(0);
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class AxpyOpCustom : public OpDef {
public:
    explicit AxpyOpCustom(const char *name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND}).UnknownShapeFormat({ge::FORMAT_ND});
        this->Input("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Output("z").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Attr("alpha").AttrType(OPTIONAL).Float(2.0f);
        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(AxpyOpCustom);
}  // namespace ops
