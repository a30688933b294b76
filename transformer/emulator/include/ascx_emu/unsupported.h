// ascx emulator: public Ascend C API names the emulator does not implement. Using one is a
// compile-time error whose first line names it ("ascx emulator: AscendC::Silu is not
// emulated ..."), instead of an unknown-identifier error or a template cascade.
// Functions are catch-all templates whose body holds a dependent static_assert (it fires
// only when the name is called); types are class templates that assert when an object is made. Only names the emulator does not define are listed here, so these
// templates never compete with an emulated overload. Clean-room (Apache-2.0).
#pragma once
#include <type_traits>

namespace ascx_emu {
template <typename...> struct always_false : std::false_type {};
template <auto...> struct always_false_v : std::false_type {};
}  // namespace ascx_emu

#define ASCX_EMU_UNSUPPORTED_MSG(NAME) "ascx emulator: AscendC::" #NAME " is not emulated (docs/emulator.md, table of API families)"

// Calls without explicit template arguments, and calls like NAME<half>(...) / NAME<half, false>(...).
#define ASCX_EMU_UNSUPPORTED_FN(NAME)                                                                  \
    template <typename... ASCX_A> inline void NAME(ASCX_A&&...) {                                      \
        static_assert(::ascx_emu::always_false<ASCX_A...>::value, ASCX_EMU_UNSUPPORTED_MSG(NAME));     \
    }                                                                                                  \
    template <typename ASCX_T, auto... ASCX_V, typename... ASCX_A> inline void NAME(ASCX_A&&...) {     \
        static_assert(::ascx_emu::always_false<ASCX_T, ASCX_A...>::value, ASCX_EMU_UNSUPPORTED_MSG(NAME)); \
    }

// Types: usable as NAME, NAME<half> (type arguments) or, with _V, NAME<PIPE_V, PIPE_MTE3>.
#define ASCX_EMU_UNSUPPORTED_TYPE(NAME)                                                                   \
    template <typename... ASCX_T> struct NAME {                                                           \
        static_assert(::ascx_emu::always_false<ASCX_T...>::value, ASCX_EMU_UNSUPPORTED_MSG(NAME));        \
    };
#define ASCX_EMU_UNSUPPORTED_TYPE_V(NAME)                                                                 \
    template <auto... ASCX_V> struct NAME {                                                               \
        static_assert(::ascx_emu::always_false_v<ASCX_V...>::value, ASCX_EMU_UNSUPPORTED_MSG(NAME));      \
    };

namespace AscendC {
// activation / math high-level API
ASCX_EMU_UNSUPPORTED_FN(Silu)
ASCX_EMU_UNSUPPORTED_FN(Swish)
ASCX_EMU_UNSUPPORTED_FN(SwiGLU)
ASCX_EMU_UNSUPPORTED_FN(GeGLU)
ASCX_EMU_UNSUPPORTED_FN(Sigmoid)
ASCX_EMU_UNSUPPORTED_FN(Tanh)
ASCX_EMU_UNSUPPORTED_FN(Sin)
ASCX_EMU_UNSUPPORTED_FN(Cos)
ASCX_EMU_UNSUPPORTED_FN(Tan)
ASCX_EMU_UNSUPPORTED_FN(Asin)
ASCX_EMU_UNSUPPORTED_FN(Acos)
ASCX_EMU_UNSUPPORTED_FN(Atan)
ASCX_EMU_UNSUPPORTED_FN(Sinh)
ASCX_EMU_UNSUPPORTED_FN(Cosh)
ASCX_EMU_UNSUPPORTED_FN(Erf)
ASCX_EMU_UNSUPPORTED_FN(Erfc)
ASCX_EMU_UNSUPPORTED_FN(Log)
ASCX_EMU_UNSUPPORTED_FN(Power)
ASCX_EMU_UNSUPPORTED_FN(Round)
ASCX_EMU_UNSUPPORTED_FN(Floor)
ASCX_EMU_UNSUPPORTED_FN(Ceil)
ASCX_EMU_UNSUPPORTED_FN(Trunc)
ASCX_EMU_UNSUPPORTED_FN(Frac)
ASCX_EMU_UNSUPPORTED_FN(Sign)
ASCX_EMU_UNSUPPORTED_FN(ClampMax)
ASCX_EMU_UNSUPPORTED_FN(ClampMin)
ASCX_EMU_UNSUPPORTED_FN(Xor)
ASCX_EMU_UNSUPPORTED_FN(Lgamma)
ASCX_EMU_UNSUPPORTED_FN(Digamma)
ASCX_EMU_UNSUPPORTED_FN(Fmod)
ASCX_EMU_UNSUPPORTED_FN(Cumsum)
// softmax family beyond SoftMax / SimpleSoftMax; normalisation beyond LayerNorm
ASCX_EMU_UNSUPPORTED_FN(SoftmaxFlash)
ASCX_EMU_UNSUPPORTED_FN(SoftmaxFlashV2)
ASCX_EMU_UNSUPPORTED_FN(SoftmaxFlashV3)
ASCX_EMU_UNSUPPORTED_FN(SoftmaxGrad)
ASCX_EMU_UNSUPPORTED_FN(SoftmaxGradFront)
ASCX_EMU_UNSUPPORTED_FN(LogSoftMax)
ASCX_EMU_UNSUPPORTED_FN(AdjustSoftMaxRes)
ASCX_EMU_UNSUPPORTED_FN(RmsNorm)
ASCX_EMU_UNSUPPORTED_FN(BatchNorm)
ASCX_EMU_UNSUPPORTED_FN(DeepNorm)
ASCX_EMU_UNSUPPORTED_FN(GroupNorm)
ASCX_EMU_UNSUPPORTED_FN(LayerNormGrad)
ASCX_EMU_UNSUPPORTED_FN(LayerNormGradBeta)
ASCX_EMU_UNSUPPORTED_FN(Normalize)
ASCX_EMU_UNSUPPORTED_FN(WelfordUpdate)
ASCX_EMU_UNSUPPORTED_FN(WelfordFinalize)
// reductions / data layout high-level API
ASCX_EMU_UNSUPPORTED_FN(Sum)
ASCX_EMU_UNSUPPORTED_FN(Mean)
ASCX_EMU_UNSUPPORTED_FN(ReduceXorSum)
ASCX_EMU_UNSUPPORTED_FN(ReduceAll)
ASCX_EMU_UNSUPPORTED_FN(ReduceAny)
ASCX_EMU_UNSUPPORTED_FN(ReduceProd)
ASCX_EMU_UNSUPPORTED_FN(ReduceMean)
ASCX_EMU_UNSUPPORTED_FN(ConfusionTranspose)
ASCX_EMU_UNSUPPORTED_FN(TransData)
ASCX_EMU_UNSUPPORTED_FN(Arange)
ASCX_EMU_UNSUPPORTED_FN(ArithProgression)
ASCX_EMU_UNSUPPORTED_FN(DropOut)
ASCX_EMU_UNSUPPORTED_FN(Sort)
ASCX_EMU_UNSUPPORTED_FN(TopK)
ASCX_EMU_UNSUPPORTED_FN(Concat)
ASCX_EMU_UNSUPPORTED_FN(Extract)
ASCX_EMU_UNSUPPORTED_FN(ProposalConcat)
ASCX_EMU_UNSUPPORTED_FN(ProposalExtract)
ASCX_EMU_UNSUPPORTED_FN(RpSort16)
ASCX_EMU_UNSUPPORTED_FN(MrgSort4)
ASCX_EMU_UNSUPPORTED_FN(GetMrgSortResult)
ASCX_EMU_UNSUPPORTED_FN(Gatherb)
ASCX_EMU_UNSUPPORTED_FN(Scatter)
ASCX_EMU_UNSUPPORTED_FN(BilinearInterpolation)
// quantisation
ASCX_EMU_UNSUPPORTED_FN(AscendQuant)
ASCX_EMU_UNSUPPORTED_FN(AscendDequant)
ASCX_EMU_UNSUPPORTED_FN(AscendAntiQuant)
// mask / register state the emulator does not model
ASCX_EMU_UNSUPPORTED_FN(SetMaskCount)
ASCX_EMU_UNSUPPORTED_FN(SetMaskNorm)
ASCX_EMU_UNSUPPORTED_FN(SetCmpMask)
ASCX_EMU_UNSUPPORTED_FN(GetCmpMask)
ASCX_EMU_UNSUPPORTED_FN(SetAtomicMax)
ASCX_EMU_UNSUPPORTED_FN(SetAtomicMin)
ASCX_EMU_UNSUPPORTED_FN(SetAtomicType)
// cube forms beyond LoadData 2D / Mmad / Fixpipe to GM
ASCX_EMU_UNSUPPORTED_FN(LoadDataWithTranspose)
ASCX_EMU_UNSUPPORTED_FN(LoadDataWithSparse)
ASCX_EMU_UNSUPPORTED_FN(LoadImageToLocal)
ASCX_EMU_UNSUPPORTED_FN(Load3DSetFMatrixCal)
ASCX_EMU_UNSUPPORTED_FN(SetFmatrix)
ASCX_EMU_UNSUPPORTED_FN(SetLoadDataPaddingValue)
ASCX_EMU_UNSUPPORTED_FN(SetLoadDataBoundary)
ASCX_EMU_UNSUPPORTED_FN(SetLoadDataRepeat)
ASCX_EMU_UNSUPPORTED_FN(MmadWithSparse)
ASCX_EMU_UNSUPPORTED_FN(SetFixPipeConfig)
ASCX_EMU_UNSUPPORTED_FN(SetFixpipeNz2ndFlag)
ASCX_EMU_UNSUPPORTED_FN(SetFixpipePreQuantFlag)
// inter-block / system
ASCX_EMU_UNSUPPORTED_FN(IBSet)
ASCX_EMU_UNSUPPORTED_FN(IBWait)
ASCX_EMU_UNSUPPORTED_FN(InitSpmBuffer)
ASCX_EMU_UNSUPPORTED_FN(WriteSpmBuffer)
ASCX_EMU_UNSUPPORTED_FN(ReadSpmBuffer)
ASCX_EMU_UNSUPPORTED_FN(GetSystemCycle)

ASCX_EMU_UNSUPPORTED_TYPE(LoadData3DParamsV1)
ASCX_EMU_UNSUPPORTED_TYPE(LoadData3DParamsV2)
ASCX_EMU_UNSUPPORTED_TYPE(LoadData3DParamsV2Pro)
ASCX_EMU_UNSUPPORTED_TYPE(LoadData2DTransposeParams)
ASCX_EMU_UNSUPPORTED_TYPE(GatherRepeatParams)
ASCX_EMU_UNSUPPORTED_TYPE_V(TQueSync)

}  // namespace AscendC
