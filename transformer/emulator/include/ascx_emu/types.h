// ascx emulator: numeric types (half, bfloat16_t) and rounding helpers.
// Clean-room implementation written for the ascx project (Apache-2.0).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace ascx_emu {

inline uint32_t f32_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float bits_f32(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

// IEEE binary16 <- binary32, round to nearest even (handles subnormals, inf, nan).
inline uint16_t f32_to_f16_rne(float f) {
    uint32_t x = f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t exp = (x >> 23) & 0xffu;
    uint32_t man = x & 0x7fffffu;
    if (exp == 0xffu) {  // inf / nan
        return static_cast<uint16_t>(sign | 0x7c00u | (man ? (0x200u | (man >> 13)) : 0u));
    }
    int32_t e = static_cast<int32_t>(exp) - 127 + 15;
    if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
    if (e <= 0) {                                               // subnormal or zero
        if (e < -10) return static_cast<uint16_t>(sign);
        man |= 0x800000u;
        uint32_t shift = static_cast<uint32_t>(14 - e);
        uint32_t h = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1u);
        uint32_t half_ = 1u << (shift - 1);
        if (rem > half_ || (rem == half_ && (h & 1u))) ++h;
        return static_cast<uint16_t>(sign | h);
    }
    uint32_t h = (static_cast<uint32_t>(e) << 10) | (man >> 13);
    uint32_t rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // carry may round up to inf: correct
    return static_cast<uint16_t>(sign | h);
}

inline float f16_to_f32(uint16_t h) {
    uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1fu) return bits_f32(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        if (man == 0) return bits_f32(sign);
        float v = std::ldexp(static_cast<float>(man), -24);
        return sign ? -v : v;
    }
    return bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

inline uint16_t f32_to_bf16_rne(float f) {
    uint32_t x = f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet nan
    uint32_t lsb = (x >> 16) & 1u;
    x += 0x7fffu + lsb;
    return static_cast<uint16_t>(x >> 16);
}
inline float bf16_to_f32(uint16_t b) { return bits_f32(static_cast<uint32_t>(b) << 16); }

struct raw_bits_tag {};

// Scalar operands (Adds(dst, src, 2.0f, n) on half tensors) take the tensor's type, so a
// literal of another arithmetic type converts instead of failing template deduction.
template <typename T> struct nondeduced { using type = T; };
template <typename T> using nondeduced_t = typename nondeduced<T>::type;

}  // namespace ascx_emu

// The two 16-bit float types. Arithmetic is done in float and rounded once (RNE).
#define ASCX_EMU_DEFINE_F16_TYPE(NAME, TO_BITS, FROM_BITS)                                          \
    struct NAME {                                                                                   \
        uint16_t bits_ = 0;                                                                         \
        NAME() = default;                                                                           \
        template <typename T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0> \
        NAME(T v) : bits_(TO_BITS(static_cast<float>(v))) {}                                        \
        NAME(ascx_emu::raw_bits_tag, uint16_t b) : bits_(b) {}                                      \
        static NAME from_bits(uint16_t b) { return NAME(ascx_emu::raw_bits_tag{}, b); }             \
        operator float() const { return FROM_BITS(bits_); }                                         \
        float to_float() const { return FROM_BITS(bits_); }                                         \
        NAME operator-() const { return from_bits(static_cast<uint16_t>(bits_ ^ 0x8000u)); }        \
        NAME operator+() const { return *this; }                                                    \
        NAME& operator+=(NAME o) { *this = NAME(to_float() + o.to_float()); return *this; }        \
        NAME& operator-=(NAME o) { *this = NAME(to_float() - o.to_float()); return *this; }        \
        NAME& operator*=(NAME o) { *this = NAME(to_float() * o.to_float()); return *this; }        \
        NAME& operator/=(NAME o) { *this = NAME(to_float() / o.to_float()); return *this; }        \
        friend NAME operator+(NAME a, NAME b) { return NAME(a.to_float() + b.to_float()); }        \
        friend NAME operator-(NAME a, NAME b) { return NAME(a.to_float() - b.to_float()); }        \
        friend NAME operator*(NAME a, NAME b) { return NAME(a.to_float() * b.to_float()); }        \
        friend NAME operator/(NAME a, NAME b) { return NAME(a.to_float() / b.to_float()); }        \
        friend bool operator==(NAME a, NAME b) { return a.to_float() == b.to_float(); }            \
        friend bool operator!=(NAME a, NAME b) { return a.to_float() != b.to_float(); }            \
        friend bool operator<(NAME a, NAME b) { return a.to_float() < b.to_float(); }              \
        friend bool operator>(NAME a, NAME b) { return a.to_float() > b.to_float(); }              \
        friend bool operator<=(NAME a, NAME b) { return a.to_float() <= b.to_float(); }            \
        friend bool operator>=(NAME a, NAME b) { return a.to_float() >= b.to_float(); }            \
    };                                                                                              \
    ASCX_EMU_MIXED_OPS(NAME, +) ASCX_EMU_MIXED_OPS(NAME, -) ASCX_EMU_MIXED_OPS(NAME, *)           \
    ASCX_EMU_MIXED_OPS(NAME, /) ASCX_EMU_MIXED_CMP(NAME, ==) ASCX_EMU_MIXED_CMP(NAME, !=)         \
    ASCX_EMU_MIXED_CMP(NAME, <) ASCX_EMU_MIXED_CMP(NAME, >) ASCX_EMU_MIXED_CMP(NAME, <=)          \
    ASCX_EMU_MIXED_CMP(NAME, >=)

// Mixed operations with a built-in arithmetic type are done in float (or double) and return it.
#define ASCX_EMU_MIXED_OPS(NAME, OP)                                                                 \
    template <typename T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0>      \
    inline auto operator OP(NAME a, T b) { return static_cast<typename std::conditional<std::is_same<T, double>::value, double, float>::type>(a.to_float()) OP static_cast<typename std::conditional<std::is_same<T, double>::value, double, float>::type>(b); } \
    template <typename T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0>      \
    inline auto operator OP(T a, NAME b) { return static_cast<typename std::conditional<std::is_same<T, double>::value, double, float>::type>(a) OP static_cast<typename std::conditional<std::is_same<T, double>::value, double, float>::type>(b.to_float()); }
#define ASCX_EMU_MIXED_CMP(NAME, OP)                                                                 \
    template <typename T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0>      \
    inline bool operator OP(NAME a, T b) { return static_cast<double>(a.to_float()) OP static_cast<double>(b); } \
    template <typename T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0>      \
    inline bool operator OP(T a, NAME b) { return static_cast<double>(a) OP static_cast<double>(b.to_float()); }

ASCX_EMU_DEFINE_F16_TYPE(half, ascx_emu::f32_to_f16_rne, ascx_emu::f16_to_f32)
ASCX_EMU_DEFINE_F16_TYPE(bfloat16_t, ascx_emu::f32_to_bf16_rne, ascx_emu::bf16_to_f32)

namespace ascx_emu {

template <typename T> struct is_f16_like : std::false_type {};
template <> struct is_f16_like<half> : std::true_type {};
template <> struct is_f16_like<bfloat16_t> : std::true_type {};

template <typename T> constexpr bool is_float_like() {
    return std::is_floating_point<T>::value || is_f16_like<T>::value;
}

// Convert any supported element type to double (exact for every supported type).
template <typename T> inline double to_d(T v) {
    if constexpr (is_f16_like<T>::value) return static_cast<double>(v.to_float());
    else return static_cast<double>(v);
}

template <typename T> inline const char* type_name() {
    if constexpr (std::is_same<T, half>::value) return "half";
    else if constexpr (std::is_same<T, bfloat16_t>::value) return "bfloat16_t";
    else if constexpr (std::is_same<T, float>::value) return "float";
    else if constexpr (std::is_same<T, double>::value) return "double";
    else if constexpr (std::is_same<T, int8_t>::value) return "int8_t";
    else if constexpr (std::is_same<T, uint8_t>::value) return "uint8_t";
    else if constexpr (std::is_same<T, int16_t>::value) return "int16_t";
    else if constexpr (std::is_same<T, uint16_t>::value) return "uint16_t";
    else if constexpr (std::is_same<T, int32_t>::value) return "int32_t";
    else if constexpr (std::is_same<T, uint32_t>::value) return "uint32_t";
    else if constexpr (std::is_same<T, int64_t>::value) return "int64_t";
    else if constexpr (std::is_same<T, uint64_t>::value) return "uint64_t";
    else return "other";
}

// Rounding modes (values mirror the order of AscendC::RoundMode in the public docs).
enum class Rnd { NONE, RINT, FLOOR, CEIL, ROUND, TRUNC, ODD };

// Next representable value of a 16-bit float type given by its bits (towards +inf / -inf).
inline uint16_t f16like_next(uint16_t b, bool up) {
    if ((b & 0x7fffu) == 0) return up ? 0x0001u : 0x8001u;
    bool neg = (b & 0x8000u) != 0;
    return static_cast<uint16_t>((up != neg) ? b + 1 : b - 1);
}

// Round x (exact double) to a float type D with the given mode.
template <typename D> inline D round_float_to(double x, Rnd mode) {
    D r;
    if constexpr (std::is_same<D, double>::value) return x;
    else if constexpr (std::is_same<D, float>::value) r = static_cast<float>(x);
    else r = D(static_cast<float>(x));  // note: double->float->f16 double rounding is
                                        // harmless here: sources are <= 32-bit types
    if (mode == Rnd::NONE || mode == Rnd::RINT || std::isnan(x) || std::isinf(x)) return r;
    double rv = to_d(r);
    if (rv == x || std::isinf(rv)) return r;
    D lo, hi;
    auto nxt = [](D v, bool up) -> D {
        if constexpr (std::is_same<D, float>::value) return std::nextafter(v, up ? INFINITY : -INFINITY);
        else return D::from_bits(f16like_next(v.bits_, up));
    };
    if (rv > x) { hi = r; lo = nxt(r, false); } else { lo = r; hi = nxt(r, true); }
    switch (mode) {
        case Rnd::FLOOR: return lo;
        case Rnd::CEIL: return hi;
        case Rnd::TRUNC: return x > 0 ? lo : hi;
        case Rnd::ROUND: {
            double dl = x - to_d(lo), dh = to_d(hi) - x;
            if (dl < dh) return lo;
            if (dh < dl) return hi;
            return x > 0 ? hi : lo;  // ties away from zero
        }
        case Rnd::ODD: {
            uint64_t lb;
            if constexpr (std::is_same<D, float>::value) lb = f32_bits(lo);
            else lb = lo.bits_;
            return (lb & 1u) ? lo : hi;
        }
        default: return r;
    }
}

template <typename I> inline I round_int_to(double x, Rnd mode) {
    double y;
    if (std::isnan(x)) return 0;
    switch (mode) {
        case Rnd::FLOOR: y = std::floor(x); break;
        case Rnd::CEIL: y = std::ceil(x); break;
        case Rnd::TRUNC: y = std::trunc(x); break;
        case Rnd::ROUND: y = std::round(x); break;
        default: y = std::nearbyint(x); break;  // RINT / NONE: ties to even (default FP env)
    }
    double lo = static_cast<double>(std::numeric_limits<I>::min());
    double hi = static_cast<double>(std::numeric_limits<I>::max());
    if (y < lo) return std::numeric_limits<I>::min();
    if (y > hi) return std::numeric_limits<I>::max();
    return static_cast<I>(y);
}

// Convert exact double x to element type D: floats with `mode`, integers with `mode`
// (saturating). Used by Cast and by every vector op (which rounds with RINT).
template <typename D> inline D convert(double x, Rnd mode = Rnd::RINT) {
    if constexpr (is_float_like<D>()) return round_float_to<D>(x, mode);
    else return round_int_to<D>(x, mode);
}

}  // namespace ascx_emu
