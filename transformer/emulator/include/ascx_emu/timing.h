// ascx emulator: in-process pipe-level timing model, happens-before sync-hazard detection,
// and the profile / timeline outputs. Written for the ascx project (Apache-2.0).
//
// Why here: the JSON-lines trace cannot carry real sizes (millions of records), so the
// accounting runs while the kernel executes. Every instruction calls ONE hook:
//
//     ascx_emu::tm::instr(c.tm, PIPE_V, "Add", loc, ascx_emu::tm::vec(repeats, ...), {R(src0, n), W(dst, n)});
//
// and every synchronisation calls tm::set_edge / tm::wait_edge / tm::barrier_all. A new op
// adds one `instr` call with its cost features and the local-memory bytes it reads/writes.
//
// Model (docs/timing.md): per core each pipe (S V M MTE1 MTE2 MTE3 FIX) is an in-order
// clock; the scalar unit issues instructions in program order (paying `S.issue` each) and
// an instruction starts at max(issue time, its pipe's free time, the sync edges it waits
// on). A pipe's busy cycles are sum(parameter * feature) over its instructions (linear in
// the parameters, which calibration fits). Parameters come from a file written by Python
// from the target table (ASCX_TIMING_PARAMS); nothing chip-specific is compiled in.
//
// Environment:
//   ASCX_TIMING_PARAMS=path   parameters ("PIPE feature value" and "name value" lines)
//   ASCX_PROFILE=path         write the profile summary (JSON) after every launch
//   ASCX_TIMELINE=path        write a Chrome trace-event timeline (JSON) after every launch
//   ASCX_TIMING_ONLY=1        skip the arithmetic of data instructions (same cycles)
//   ASCX_HAZARDS=error|report|off   sync-hazard detection (default error: exit 4 after the launch)
//   ASCX_AUTO_SYNC=off        run without the compiler's auto-sync (as -DASCX_EMU_NO_AUTO_SYNC)
//
// Auto-sync (on unless a translation unit defines ASCX_EMU_NO_AUTO_SYNC: `--no-auto-sync`,
// emitted kernels): the bisheng compiler's --cce-auto-sync, on by default in kernel-launch
// and op projects, inserts the synchronisation between the scalar unit and MTE2, MTE3 and V
// (both directions; V after V is in order anyway). Here a scalar access (GetValue/SetValue on
// a local tensor) that would race with an earlier MTE2, MTE3 or V access of the same bytes
// waits for that pipe instead (as an inserted wait_flag: the pipe's clock plus
// sync_latency); the other direction (S before those pipes) is already program order in
// this model. Every other pair (MTE2 -> V, V -> MTE3, the cube pipes...) still needs the
// program's own flags or queues, as on the device.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#ifndef ASCX_EMU_HAZARD_EXIT
#define ASCX_EMU_HAZARD_EXIT 4
#endif

namespace ascx_emu {
namespace tm {

constexpr int NP = 8;  // pipe_t values 0..7 (6 = ALL is never a clock)
constexpr int NF = 7;  // features per pipe
constexpr int NSCOPE = 6;  // local memories with hazard shadow state (runtime.h Scope: UB L1 L0A L0B L0C BT)

// Feature names per pipe; busy(pipe) = sum(param[pipe][k] * feature[pipe][k]).
inline const char* feat_name(int pipe, int k) {
    static const char* n[NP][NF] = {
        {"issue", "local_access", "gm_access", "", "", "", ""},                      // S
        {"instr", "repeat", "transc_repeat", "reduce_instr", "cast_instr", "count_tail", "bank_beat"},  // V
        {"instr", "fractal", "fractal_f32", "", "", "", ""},                         // M
        {"instr", "l0a_byte", "l0b_byte", "", "", "", ""},                           // MTE1
        {"instr", "ub_byte", "l1_byte", "block", "unaligned_byte", "", ""},          // MTE2
        {"instr", "byte", "block", "unaligned_byte", "", "", ""},                    // MTE3
        {"", "", "", "", "", "", ""},                                               // ALL
        {"instr", "byte", "", "", "", "", ""},                                       // FIX
    };
    return (pipe >= 0 && pipe < NP && k >= 0 && k < NF) ? n[pipe][k] : "";
}
inline const char* pname(int p) {
    static const char* n[] = {"S", "V", "M", "MTE1", "MTE2", "MTE3", "ALL", "FIX"};
    return (p >= 0 && p < NP) ? n[p] : "?";
}
enum { S_ISSUE = 0, S_LOCAL, S_GM };
enum { V_INSTR = 0, V_REPEAT, V_TRANSC, V_REDUCE, V_CAST, V_TAIL, V_BANK };
enum { M_INSTR = 0, M_FRACTAL, M_FRACTAL_F32 };
enum { T1_INSTR = 0, T1_L0A, T1_L0B };
enum { T2_INSTR = 0, T2_UB, T2_L1, T2_BLOCK, T2_UNALIGNED };
enum { T3_INSTR = 0, T3_BYTE, T3_BLOCK, T3_UNALIGNED };
enum { FX_INSTR = 0, FX_BYTE };
enum HazardMode { HZ_OFF = 0, HZ_REPORT, HZ_ERROR };

struct Config {
    bool timing = false;  // parameters loaded: price instructions
    double p[NP][NF] = {};
    double sync_latency = 0, xcore_latency = 0, launch = 0, block_dispatch = 0;
    double hbm_bytes_per_cycle = 0, clock_mhz = 1000, gm_align = 512, l2_bytes = 0;
    double l2_bytes_per_cycle = 0;  // aggregate L2 bandwidth (0: no L2 bandwidth bound)
    double launch_mix = 0;          // extra launch cycles of a MIX_MODE kernel
    // UB banks (bank_extra_beats): 32 B rows, 16 groups of 3 banks of 128 rows (0: no bank model)
    int ub_bank_groups = 0, ub_banks_per_group = 0, ub_bank_row_bytes = 0, ub_bank_depth = 0;
    int aiv_cores = 1, aic_cores = 1;
    bool timing_only = false;
    int hazards = HZ_ERROR;
    bool auto_sync = true;  // the compiler's automatic S <-> MTE2/MTE3/V synchronisation
    uint64_t drop_wait = 0;  // test-only: the k-th wait of each core orders nothing (ASCX_EMU_TEST_DROP_WAIT)
    std::string profile_path, timeline_path;
};

inline int pipe_index(const char* s) {
    for (int i = 0; i < NP; ++i)
        if (std::strcmp(s, pname(i)) == 0) return i;
    return -1;
}

// Loads the configuration from the environment once (called before any core thread starts).
inline Config& config() {
    static Config cfg = [] {
        Config c;
        const char* e = std::getenv("ASCX_TIMING_ONLY");
        c.timing_only = e && *e && std::strcmp(e, "0") != 0;
        e = std::getenv("ASCX_HAZARDS");
        if (e && *e) c.hazards = std::strcmp(e, "off") == 0 ? HZ_OFF : std::strcmp(e, "report") == 0 ? HZ_REPORT : HZ_ERROR;
        if ((e = std::getenv("ASCX_PROFILE")) && *e) c.profile_path = e;
        if ((e = std::getenv("ASCX_AUTO_SYNC")) && *e) c.auto_sync = std::strcmp(e, "off") != 0 && std::strcmp(e, "0") != 0;
        if ((e = std::getenv("ASCX_EMU_TEST_DROP_WAIT")) && *e) c.drop_wait = std::strtoull(e, nullptr, 10);
        if ((e = std::getenv("ASCX_TIMELINE")) && *e) c.timeline_path = e;
        const char* path = std::getenv("ASCX_TIMING_PARAMS");
        if (path && *path) {
            FILE* f = std::fopen(path, "r");
            if (!f) {
                std::fprintf(stderr, "ascx-emu: error: cannot read timing parameters %s\n", path);
                std::_Exit(3);
            }
            char a[64], b[64];
            double v;
            char line[256];
            while (std::fgets(line, sizeof line, f)) {
                if (line[0] == '#' || line[0] == '\n') continue;
                if (std::sscanf(line, "%63s %63s %lf", a, b, &v) == 3) {
                    int pi = pipe_index(a);
                    bool ok = false;
                    for (int k = 0; pi >= 0 && k < NF; ++k)
                        if (*feat_name(pi, k) && std::strcmp(b, feat_name(pi, k)) == 0) { c.p[pi][k] = v; ok = true; }
                    if (!ok) { std::fprintf(stderr, "ascx-emu: error: unknown timing parameter %s %s\n", a, b); std::_Exit(3); }
                } else if (std::sscanf(line, "%63s %lf", a, &v) == 2) {
                    std::string k = a;
                    if (k == "sync_latency") c.sync_latency = v;
                    else if (k == "xcore_latency") c.xcore_latency = v;
                    else if (k == "launch") c.launch = v;
                    else if (k == "block_dispatch") c.block_dispatch = v;
                    else if (k == "hbm_bytes_per_cycle") c.hbm_bytes_per_cycle = v;
                    else if (k == "clock_mhz") c.clock_mhz = v;
                    else if (k == "gm_align") c.gm_align = v;
                    else if (k == "l2_bytes") c.l2_bytes = v;
                    else if (k == "l2_bytes_per_cycle") c.l2_bytes_per_cycle = v;
                    else if (k == "launch_mix") c.launch_mix = v;
                    else if (k == "aiv_cores") c.aiv_cores = std::max(1, static_cast<int>(v));
                    else if (k == "aic_cores") c.aic_cores = std::max(1, static_cast<int>(v));
                    else if (k == "ub_bank_groups") c.ub_bank_groups = static_cast<int>(v);
                    else if (k == "ub_banks_per_group") c.ub_banks_per_group = static_cast<int>(v);
                    else if (k == "ub_bank_row_bytes") c.ub_bank_row_bytes = static_cast<int>(v);
                    else if (k == "ub_bank_depth") c.ub_bank_depth = static_cast<int>(v);
                    else { std::fprintf(stderr, "ascx-emu: error: unknown timing parameter %s\n", a); std::_Exit(3); }
                }
            }
            std::fclose(f);
            c.timing = true;
        }
        return c;
    }();
    return cfg;
}
inline bool timing_only() { return config().timing_only; }

// ---------------------------------------------------------------- per-instruction data
struct Cost {
    double f[NF] = {};
};
// A local-memory access: bytes [lo, hi) of a scope, read or written.
struct Acc {
    int scope;
    int64_t lo, hi;
    bool write;
};
template <class L> inline Acc R(const L& t, int64_t bytes) { return Acc{t.scope(), static_cast<int64_t>(t.addr()), static_cast<int64_t>(t.addr()) + bytes, false}; }
template <class L> inline Acc W(const L& t, int64_t bytes) { return Acc{t.scope(), static_cast<int64_t>(t.addr()), static_cast<int64_t>(t.addr()) + bytes, true}; }

// Vector instruction classes (pricing).
enum VecClass { VC_SIMPLE = 0, VC_TRANSC, VC_REDUCE, VC_CAST };
inline Cost vec(int cls, double repeats, bool count_form, double bytes) {
    Cost c;
    c.f[V_INSTR] = 1;
    c.f[V_REPEAT] = repeats;
    if (cls == VC_TRANSC) c.f[V_TRANSC] = repeats;
    if (cls == VC_REDUCE) c.f[V_REDUCE] = 1;
    if (cls == VC_CAST) c.f[V_CAST] = 1;
    if (count_form && static_cast<int64_t>(bytes) % 256 != 0) c.f[V_TAIL] = 1;
    return c;
}
// ---------------------------------------------------------------- UB bank conflicts
// The public best-practice page "Avoiding Bank Conflicts in the Unified Buffer" (Atlas A2/A3,
// NPU architecture 220x; docs/timing.md "UB banks"): the UB is 48 banks of 128 rows x 32 B in
// 16 bank groups of 3 banks. Row u = addr / 32 lies in group u % 16 and bank
// 16 * (u / (16 * 128)) + u % 16 (the page's examples: 0x10000 bank 16, 0x10020 bank 17,
// 0x20020 bank 33). Per beat (instruction cycle) the vector unit reads one row from each bank
// group and writes one row to each group; a read and a write of the same bank conflict. So
// one repeat (up to 8 blocks of each operand, accessed at the same time) takes
//     beats = max(reads of its busiest group, writes of its busiest group,
//                 reads + writes of its busiest bank)
// beats (a row read twice in one repeat, as by a block stride of 0 or src0 == src1, is one
// access), and an instruction pays the beats past one per repeat (`V.repeat` prices one) as the
// feature `V.bank_beat`. The page's own numbers: dst blk_stride 16 -> 8 beats a repeat,
// blk_stride 8 -> 4 (tests/emulator/test_bank_conflicts.py).
struct VOp {
    int64_t addr;        // UB byte address of block 0 of repeat 0
    int64_t blk, rep;    // block and repeat strides, 32 B units
    int64_t blocks;      // blocks a repeat touches (<= 8)
    int64_t last_blocks; // blocks of the operand's last repeat
    int64_t nrep;        // repeats the operand takes part in (the first ones)
    bool write;
};
inline double bank_extra_beats(const VOp* ops, int n, int64_t repeats) {
    const Config& cfg = config();
    const int G = cfg.ub_bank_groups, B = cfg.ub_banks_per_group, row = cfg.ub_bank_row_bytes;
    if (G <= 0 || G > 64 || B <= 0 || G * B > 256 || row <= 0 || cfg.ub_bank_depth <= 0 || n <= 0 || n > 8) return 0;
    const int64_t sect = static_cast<int64_t>(G) * cfg.ub_bank_depth;  // rows of one bank per group
    int64_t key[8][3], prev[8][3];
    bool have_prev = false;
    int prev_beats = 1;
    double extra = 0;
    for (int64_t r = 0; r < repeats; ++r) {
        // The beats of a repeat follow from each operand's group offset (relative to the first
        // operand's), its section and its block count: reuse the last repeat's when they match.
        bool cacheable = true;
        const int64_t u_first = ops[0].addr / row + r * ops[0].rep;
        for (int i = 0; i < n; ++i) {
            const VOp& o = ops[i];
            int64_t nb = r >= o.nrep ? 0 : (r == o.nrep - 1 ? o.last_blocks : o.blocks);
            int64_t u0 = o.addr / row + r * o.rep;
            int64_t s0 = u0 / sect, s1 = nb > 0 ? (u0 + (nb - 1) * o.blk) / sect : s0;
            if (s0 != s1) cacheable = false;
            key[i][0] = ((u0 - u_first) % G + G) % G;
            key[i][1] = s0;
            key[i][2] = nb;
        }
        if (cacheable && have_prev && std::memcmp(key, prev, sizeof(int64_t) * 3 * static_cast<size_t>(n)) == 0) {
            extra += prev_beats - 1;
            continue;
        }
        int rg[64] = {}, wg[64] = {}, ab[256] = {};
        int64_t seen[2][64];  // rows already read / written in this repeat: one access each
        int nseen[2] = {0, 0};
        int beats = 1;
        for (int i = 0; i < n; ++i) {
            const VOp& o = ops[i];
            const int64_t nb = key[i][2];
            for (int64_t k = 0; k < nb; ++k) {
                int64_t u = o.addr / row + r * o.rep + k * o.blk;
                int64_t* sv = seen[o.write ? 1 : 0];
                int& ns = nseen[o.write ? 1 : 0];
                if (std::find(sv, sv + ns, u) != sv + ns) continue;  // the same row again (block stride 0, src0 == src1)
                if (ns < 64) sv[ns++] = u;
                int g = static_cast<int>(u % G);
                int b = static_cast<int>((u / sect) % B) * G + g;
                beats = std::max(beats, o.write ? ++wg[g] : ++rg[g]);
                beats = std::max(beats, ++ab[b]);
            }
        }
        extra += beats - 1;
        if (cacheable) {
            std::memcpy(prev, key, sizeof(int64_t) * 3 * static_cast<size_t>(n));
            have_prev = true;
            prev_beats = beats;
        } else {
            have_prev = false;
        }
    }
    return extra;
}
// The operands of a count-form vector instruction (contiguous, `repeats` repeats) from its
// UB accesses: operand i spans [lo, hi) and advances by its share of blocks per repeat.
inline double bank_extra_beats_count(std::initializer_list<Acc> acc, int64_t repeats, int ub_scope) {
    if (config().ub_bank_groups <= 0 || repeats <= 0) return 0;
    VOp ops[8];
    int n = 0;
    for (const Acc& a : acc) {
        if (a.scope != ub_scope || a.hi <= a.lo || n == 8) continue;
        int64_t blocks = (a.hi - a.lo + 31) / 32;
        int64_t per = std::min<int64_t>(8, (blocks + repeats - 1) / repeats);
        int64_t nrep = std::min<int64_t>(repeats, (blocks + per - 1) / per);
        ops[n++] = VOp{a.lo, 1, per, per, blocks - (nrep - 1) * per, nrep, a.write};
    }
    return bank_extra_beats(ops, n, repeats);
}

// MTE2 GM -> UB/L1 (dst_scope 0 = UB), MTE3 local -> GM: `unaligned` bytes start off gm_align.
inline Cost copy_in(double bytes, double blocks, bool to_l1, double unaligned) {
    Cost c;
    c.f[T2_INSTR] = 1;
    c.f[to_l1 ? T2_L1 : T2_UB] = bytes;
    c.f[T2_BLOCK] = blocks;
    c.f[T2_UNALIGNED] = unaligned;
    return c;
}
inline Cost copy_out(double bytes, double blocks, double unaligned) {
    Cost c;
    c.f[T3_INSTR] = 1;
    c.f[T3_BYTE] = bytes;
    c.f[T3_BLOCK] = blocks;
    c.f[T3_UNALIGNED] = unaligned;
    return c;
}
inline Cost load_l0(double bytes, bool to_l0b) {
    Cost c;
    c.f[T1_INSTR] = 1;
    c.f[to_l0b ? T1_L0B : T1_L0A] = bytes;
    return c;
}
inline Cost mmad(double fractals, bool f32) {
    Cost c;
    c.f[M_INSTR] = 1;
    c.f[f32 ? M_FRACTAL_F32 : M_FRACTAL] = fractals;
    return c;
}
inline Cost fixpipe(double bytes) {
    Cost c;
    c.f[FX_INSTR] = 1;
    c.f[FX_BYTE] = bytes;
    return c;
}

// Bytes of blocks whose GM start address is not gm_align-aligned (relative to the GmAlloc
// region base, which stands for the device buffer base).
inline double unaligned_bytes(uint64_t gm_offset, uint64_t block_bytes, uint64_t block_pitch, uint64_t blocks) {
    uint64_t al = static_cast<uint64_t>(config().gm_align);
    if (al == 0) return 0;
    if (block_pitch % al == 0) return (gm_offset % al) ? static_cast<double>(block_bytes * blocks) : 0.0;
    double n = 0;
    for (uint64_t i = 0; i < blocks; ++i)
        if ((gm_offset + i * block_pitch) % al) n += static_cast<double>(block_bytes);
    return n;
}

// ---------------------------------------------------------------- sync edges
// One end of a sync edge: when it was set (cycles) and what the setting pipe had seen.
struct Edge {
    bool valid = false;
    double t = 0;
    int pipe = 0;
    uint32_t vc[NP] = {};
    int core = 0;
};

// ---------------------------------------------------------------- hazard shadow state
struct Gran {  // one 32 B granule of a local memory
    uint32_t w_epoch = 0, w_loc = 0;
    int8_t w_pipe = -1;
    uint8_t r_mask = 0;  // pipes with a read since the last write
    uint32_t r_epoch[NP] = {};
    uint32_t r_loc[NP] = {};
};
struct HazardRec {
    const char* kind;
    int scope;
    int64_t lo, hi;
    int p1, p2;
    uint32_t loc1, loc2;
    uint64_t count;
};
struct Ev {  // timeline slice
    double t, dur;
    const char* op;
    int line;
    int8_t pipe;
};
struct Flow {
    int from_core, from_pipe, to_core, to_pipe;
    double t_from, t_to;
};

// One 512 B GM line touched by a copy, at the start time of the instruction that moved it
// (core-local cycles; the L2 model merges every core's touches in time order).
struct GmTouch {
    double t;
    uint64_t line;
};

struct TimingCore {
    double free_at[NP] = {};
    double issue = 0;
    double busy[NP] = {};
    double feat[NP][NF] = {};
    uint32_t vc[NP][NP] = {};  // vc[p]: vector clock of pipe p (instructions of each pipe it follows)
    double gm_bytes = 0, scalar_cycles = 0;
    std::vector<GmTouch> gm_lines;   // 512 B GM lines touched, in program order (the L2 model)
    size_t gm_stamped = 0;           // touches before this index carry their instruction's start time
    bool gm_lines_over = false;      // more touches than `gm_touch_cap()`: no longer recorded
    int id = 0;
    uint64_t waits = 0;
    std::vector<Edge> flags = std::vector<Edge>(64 * 8);
    std::vector<Gran> shadow[NSCOPE];
    std::vector<std::pair<const char*, int>> locs{{"?", 0}};
    std::map<std::pair<const char*, int>, uint32_t> loc_ids;
    std::map<std::string, HazardRec> hazards;
    // hot lines: cycles per (line, pipe) for the main file, a map for others
    const char* main_file = nullptr;
    std::vector<double> hot_main;  // line * NP + pipe
    std::vector<uint32_t> loc_main;  // line -> loc id (main file)
    std::map<std::pair<const char*, int>, std::vector<double>> hot_other;
    std::vector<Ev> events;
    std::vector<Flow> flows;

    double end() const {
        double e = issue;
        for (int p = 0; p < NP; ++p) e = std::max(e, free_at[p]);
        return e;
    }
};

// GM traffic of one access: bytes for the HBM / L2 model, the lines it touches for the L2
// model (stamped with the start time of the instruction `instr` prices next).
// A core records at most this many touches (16 B each): past it, the launch's L2 model
// gives up (HBM carries every byte, the footprint is reported as a lower bound), so the
// bookkeeping of a kernel over 50 GB of GM stays bounded (128 MiB per core) instead of
// growing with the GM it reads. The dataset's largest GEMM touches about 1 M lines per core.
inline size_t gm_touch_cap() { return size_t{1} << 23; }

inline void gm_touch(TimingCore& t, uintptr_t addr, uint64_t bytes) {
    t.gm_bytes += static_cast<double>(bytes);
    if (bytes == 0 || !config().timing || t.gm_lines_over) return;
    for (uint64_t l = addr >> 9, e = (addr + bytes - 1) >> 9; l <= e; ++l) t.gm_lines.push_back(GmTouch{0.0, l});
    if (t.gm_lines.size() > gm_touch_cap()) {
        t.gm_lines_over = true;
        std::vector<GmTouch>().swap(t.gm_lines);
        t.gm_stamped = 0;
    }
}

// The L2 model of one launch: an LRU cache of `capacity` bytes of 512 B lines, shared by
// every core, fed with all cores' touches in time order (each core's times offset by its
// block's start). Returns the fraction of touches that miss (a first touch always misses).
// Exact LRU by stack distance: a re-touch hits when fewer than capacity / 512 distinct
// lines were touched since its previous touch (Fenwick tree over touch positions).
// `uniq`: the distinct lines of `touches`, sorted (the caller has them: the footprint).
inline double l2_miss_fraction(std::vector<GmTouch>& touches, const std::vector<uint64_t>& uniq, double capacity) {
    const size_t n = touches.size();
    if (n == 0) return 0.0;
    std::stable_sort(touches.begin(), touches.end(), [](const GmTouch& a, const GmTouch& b) { return a.t < b.t; });
    std::vector<uint64_t> ids(n);
    for (size_t i = 0; i < n; ++i) ids[i] = touches[i].line;
    std::vector<int64_t> last(uniq.size(), -1);
    std::vector<int32_t> bit(n + 1, 0);  // 1 at the position of each line's latest touch
    auto add = [&](size_t i, int32_t v) { for (++i; i <= n; i += i & (~i + 1)) bit[i] += v; };
    auto prefix = [&](size_t i) { int64_t s = 0; for (; i > 0; i -= i & (~i + 1)) s += bit[i]; return s; };  // [0, i)
    const double lines = capacity / 512.0;
    size_t misses = 0;
    for (size_t i = 0; i < n; ++i) {
        size_t x = static_cast<size_t>(std::lower_bound(uniq.begin(), uniq.end(), ids[i]) - uniq.begin());
        if (last[x] < 0) {
            ++misses;
        } else {
            size_t p = static_cast<size_t>(last[x]);
            double distinct = static_cast<double>(prefix(i) - prefix(p + 1));  // lines touched since
            if (distinct >= lines) ++misses;
            add(p, -1);
        }
        add(i, 1);
        last[x] = static_cast<int64_t>(i);
    }
    return static_cast<double>(misses) / static_cast<double>(n);
}

inline size_t& event_budget() {  // timeline slices left for the whole process
    static size_t n = 2000000;
    return n;
}

inline uint32_t loc_id(TimingCore& t, const char* file, int line) {
    if (!t.main_file) t.main_file = file;
    if (file == t.main_file && line >= 0 && line < 1000000) {
        size_t i = static_cast<size_t>(line);
        if (i >= t.loc_main.size()) t.loc_main.resize(i + 256, 0u);
        if (t.loc_main[i]) return t.loc_main[i];
    }
    auto key = std::make_pair(file, line);
    auto it = t.loc_ids.find(key);
    if (it != t.loc_ids.end()) return it->second;
    uint32_t id = static_cast<uint32_t>(t.locs.size());
    t.locs.push_back(key);
    t.loc_ids.emplace(key, id);
    if (file == t.main_file && line >= 0 && static_cast<size_t>(line) < t.loc_main.size()) t.loc_main[static_cast<size_t>(line)] = id;
    return id;
}

inline void hot_add(TimingCore& t, const char* file, int line, int pipe, double cycles) {
    if (!file || line < 0) return;
    if (!t.main_file) t.main_file = file;
    if (file == t.main_file && line < 1000000) {
        size_t i = static_cast<size_t>(line) * NP + static_cast<size_t>(pipe);
        if (i >= t.hot_main.size()) t.hot_main.resize(i + NP * 64, 0.0);
        t.hot_main[i] += cycles;
        return;
    }
    auto& v = t.hot_other[{file, line}];
    if (v.empty()) v.assign(NP, 0.0);
    v[static_cast<size_t>(pipe)] += cycles;
}

inline const char* basename_of(const char* f) {
    if (!f) return "?";
    const char* b = std::strrchr(f, '/');
    return b ? b + 1 : f;
}

inline void note_hazard(TimingCore& t, const char* kind, int scope, int64_t lo, int64_t hi, int p1, uint32_t l1, int p2, uint32_t l2) {
    std::string key = std::string(kind) + "/" + std::to_string(scope) + "/" + std::to_string(p1) + "/" + std::to_string(l1) + "/" +
                      std::to_string(p2) + "/" + std::to_string(l2);
    auto it = t.hazards.find(key);
    if (it != t.hazards.end()) {
        it->second.count++;
        it->second.lo = std::min(it->second.lo, lo);
        it->second.hi = std::max(it->second.hi, hi);
        return;
    }
    t.hazards.emplace(key, HazardRec{kind, scope, lo, hi, p1, p2, l1, l2, 1});
}

inline void join(uint32_t* dst, const uint32_t* src) {
    for (int q = 0; q < NP; ++q) dst[q] = std::max(dst[q], src[q]);
}

// Pipes the compiler's auto-sync orders the scalar unit after (see the header comment).
inline bool auto_synced(int scalar_pipe, int other) {
    return scalar_pipe == 0 && config().auto_sync && (other == 1 || other == 4 || other == 5);  // V, MTE2, MTE3
}
// The scalar unit waits for pipe q (an inserted set_flag(q, S) / wait_flag pair).
inline void auto_wait(TimingCore& t, int q) {
    join(t.vc[0], t.vc[q]);
    t.issue = std::max(t.issue, t.free_at[q] + config().sync_latency);
}

// Checks one access of the current instruction (pipe p, epoch e) against the granules'
// earlier accesses from other pipes, then records it.
inline void access(TimingCore& t, int p, const Acc& a, uint32_t loc, size_t cap_bytes) {
    if (a.hi <= a.lo || a.scope < 0 || a.scope >= NSCOPE) return;
    auto& sh = t.shadow[a.scope];
    if (sh.empty()) sh.resize(cap_bytes / 32 + 1);
    int64_t g0 = a.lo / 32, g1 = std::min<int64_t>((a.hi + 31) / 32, static_cast<int64_t>(sh.size()));
    const uint32_t* me = t.vc[p];
    uint32_t e = me[p];
    const uint8_t others = static_cast<uint8_t>(~(1u << p));
    for (int64_t g = g0; g < g1; ++g) {
        Gran& s = sh[static_cast<size_t>(g)];
        int wp = s.w_pipe;
        if (wp >= 0 && wp != p && s.w_epoch > me[wp]) {
            if (auto_synced(p, wp)) auto_wait(t, wp);
            else note_hazard(t, a.write ? "WAW" : "RAW", a.scope, g * 32, g * 32 + 32, wp, s.w_loc, p, loc);
        }
        if (a.write) {
            for (uint8_t m = static_cast<uint8_t>(s.r_mask & others); m; m = static_cast<uint8_t>(m & (m - 1))) {
                int q = __builtin_ctz(m);
                if (s.r_epoch[q] <= me[q]) continue;
                if (auto_synced(p, q)) auto_wait(t, q);
                else note_hazard(t, "WAR", a.scope, g * 32, g * 32 + 32, q, s.r_loc[q], p, loc);
            }
            s.w_pipe = static_cast<int8_t>(p);
            s.w_epoch = e;
            s.w_loc = loc;
            s.r_mask = 0;
        } else {
            s.r_epoch[p] = e;
            s.r_loc[p] = loc;
            s.r_mask = static_cast<uint8_t>(s.r_mask | (1u << p));
        }
    }
}


inline void record(TimingCore& t, int pipe, double start, double dur, const char* op, int line) {
    if (config().timeline_path.empty() || event_budget() == 0) return;
    --event_budget();
    t.events.push_back(Ev{start, dur, op, line, static_cast<int8_t>(pipe)});
}

// THE instruction hook: an instruction `op` on `pipe` with cost features `c`, touching `acc`.
// (`cap` gives local memory capacities for the shadow state, by scope.)
inline void instr(TimingCore& t, int pipe, const char* op, const char* file, int line, const Cost& c,
                  std::initializer_list<Acc> acc, const uint32_t* cap) {
    const Config& cfg = config();
    if (pipe < 0 || pipe >= NP || pipe == 6) return;
    // happens-before: the scalar unit issued it, so it follows everything S has seen
    if (pipe != 0) join(t.vc[pipe], t.vc[0]);
    t.vc[pipe][pipe]++;
    if (cfg.hazards != HZ_OFF && acc.size()) {
        uint32_t lid = loc_id(t, file, line);
        for (const Acc& a : acc) access(t, pipe, a, lid, a.scope >= 0 && a.scope < NSCOPE ? cap[a.scope] : 0);
    }
    double cost = 0;
    for (int k = 0; k < NF; ++k) {
        t.feat[pipe][k] += c.f[k];
        cost += cfg.p[pipe][k] * c.f[k];
    }
    double start;
    if (pipe == 0) {
        start = t.issue;
        t.issue += cost;
        t.scalar_cycles += cost;
    } else {
        double is = cfg.p[0][S_ISSUE];
        t.feat[0][S_ISSUE] += 1;
        t.busy[0] += is;
        t.issue += is;
        start = std::max(t.issue, t.free_at[pipe]);
        t.free_at[pipe] = start + cost;
    }
    t.busy[pipe] += cost;
    for (size_t i = t.gm_stamped; i < t.gm_lines.size(); ++i) t.gm_lines[i].t = start;
    t.gm_stamped = t.gm_lines.size();
    if (cfg.timing) {
        hot_add(t, file, line, pipe, cost);
        record(t, pipe, start, cost, op, line);
    }
}

// A synchronisation instruction issued by the scalar unit (costs one issue slot).
inline void sync_issue(TimingCore& t) {
    double is = config().p[0][S_ISSUE];
    t.feat[0][S_ISSUE] += 1;
    t.busy[0] += is;
    t.issue += is;
}
// When a set on `pipe` fires: after the pipe's earlier instructions (S: at issue).
inline double pipe_time(const TimingCore& t, int pipe) { return pipe == 0 ? t.issue : t.free_at[pipe]; }

// Producer side of an edge (SetFlag, EnQue, FreeTensor, CrossCoreSetFlag).
inline void set_edge(TimingCore& t, int pipe, Edge& e, bool cross_core = false) {
    const Config& cfg = config();
    sync_issue(t);
    if (pipe < 0 || pipe >= NP || pipe == 6) pipe = 0;
    if (pipe != 0) join(t.vc[pipe], t.vc[0]);
    e.valid = true;
    e.pipe = pipe;
    e.core = t.id;
    e.t = std::max(t.issue, pipe_time(t, pipe)) + (cross_core ? cfg.xcore_latency : cfg.sync_latency);
    std::copy(std::begin(t.vc[pipe]), std::end(t.vc[pipe]), std::begin(e.vc));
    if (cfg.timing) record(t, pipe, pipe_time(t, pipe), 0, "set", 0);
}
// Consumer side (WaitFlag, DeQue, AllocTensor, CrossCoreWaitFlag): the pipe (S: the issue
// clock, i.e. the scalar unit stalls) may not go on before the edge fired.
inline void wait_edge(TimingCore& t, int pipe, const Edge& e, const char* file = nullptr, int line = 0) {
    sync_issue(t);
    if (!e.valid) return;
    if (pipe < 0 || pipe >= NP || pipe == 6) pipe = 0;
    if (pipe != 0) join(t.vc[pipe], t.vc[0]);
    bool dropped = ++t.waits == config().drop_wait;  // test-only switch: this sync edge is "removed"
    if (e.core == t.id && !dropped) join(t.vc[pipe], e.vc);
    double& clk = pipe == 0 ? t.issue : t.free_at[pipe];
    clk = std::max(clk, e.t);
    if (config().timing && !config().timeline_path.empty()) {
        t.flows.push_back(Flow{e.core, e.pipe, t.id, pipe, e.t, clk});
        record(t, pipe, clk, 0, "wait", line);
    }
    (void)file;
}
// PipeBarrier<PIPE_ALL>: every pipe drains; later instructions follow all earlier ones.
inline void barrier_all(TimingCore& t) {
    sync_issue(t);
    double m = t.end();
    uint32_t all[NP] = {};
    for (int p = 0; p < NP; ++p) join(all, t.vc[p]);
    for (int p = 0; p < NP; ++p) {
        join(t.vc[p], all);
        t.free_at[p] = m;
    }
    t.issue = m;
}

// ---------------------------------------------------------------- per-process results
struct LaunchRec {
    std::string name, mode;
    int block_dim = 0, slots = 0;
    double cycles = 0, makespan = 0, hbm_cycles = 0, gm_bytes = 0, footprint = 0, hbm_bytes = 0, offset = 0;
    double l2_cycles = 0, l2_miss = 0, launch_cycles = 0;
    std::string cores_json;
};
struct Totals {
    std::vector<LaunchRec> launches;
    double cycles = 0;
    std::map<std::pair<std::string, int>, std::vector<double>> hot;  // (file, line) -> per pipe
    std::map<std::string, HazardRec> hazards;
    std::vector<std::string> hazard_lines;  // formatted (for the JSON and stderr)
    std::string timeline;                   // Chrome trace events so far (comma-separated)
    bool timeline_truncated = false;
    uint64_t flow_ids = 0;
};
inline Totals& totals() {
    static Totals t;
    return t;
}

inline std::string jesc(const std::string& s) {
    std::string o;
    for (char ch : s) {
        if (ch == '"' || ch == '\\') { o += '\\'; o += ch; }
        else if (static_cast<unsigned char>(ch) < 0x20) o += ' ';
        else o += ch;
    }
    return o;
}
inline std::string num(double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.17g", v);
    return b;
}

}  // namespace tm
}  // namespace ascx_emu

#ifdef ASCX_EMU_NO_AUTO_SYNC
// A translation unit built without auto-sync (`--no-auto-sync`, emitted kernels) turns it off
// for the program before main runs (one flag per process, whatever the other units say).
namespace {
[[maybe_unused]] const bool ascx_emu_no_auto_sync_ = (ascx_emu::tm::config().auto_sync = false, true);
}  // namespace
#endif
