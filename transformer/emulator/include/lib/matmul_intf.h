// ascx emulator: stand-in for the high-level Matmul header. The high-level Matmul is not
// emulated: declaring a matmul::Matmul object is a compile-time error that names it. The types
// a declaration needs (MatmulType, CubeFormat, MatmulConfig) exist so that this is the first
// error. Declared only here, as on the device, so a kernel called `matmul` that does not
// include this header is unaffected. Clean-room (Apache-2.0).
#pragma once
#include "../kernel_operator.h"

namespace AscendC {
enum class CubeFormat { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR };
template <TPosition POS, CubeFormat FMT, typename T, bool ISTRANS = false> struct MatmulType {
    using type = T;
};
struct MatmulConfig {
    bool doNorm = true;
};
inline constexpr MatmulConfig CFG_NORM = {true};
inline constexpr MatmulConfig CFG_MDL = {false};
}  // namespace AscendC

namespace matmul {
using AscendC::MatmulType;
template <class A, class B, class C, class BIAS = C, const AscendC::MatmulConfig& MM_CFG = AscendC::CFG_NORM, class... MORE> class Matmul {
    static_assert(::ascx_emu::always_false<A>::value,
                  ASCX_EMU_UNSUPPORTED_MSG(matmul::Matmul) "; use the basic cube API (LoadData, Mmad, Fixpipe)");
};
}  // namespace matmul
namespace AscendC {
using ::matmul::Matmul;
}  // namespace AscendC

#ifndef REGIST_MATMUL_OBJ
#define REGIST_MATMUL_OBJ(...) ((void)0)
#endif
