// ascx emulator: per-core state, error reporting, trace, local memories, tensors,
// queues, synchronisation and the CPU-debug harness (ICPU_RUN_KF, GmAlloc, ...).
// Clean-room implementation written for the ascx project from the public Ascend C
// API documentation (Apache-2.0). No Huawei header text is used.
#pragma once
#include <atomic>
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <sys/mman.h>

#include "timing.h"
#include "types.h"

#include "mem_sizes.h"  // local memory sizes (ASCX_EMU_<SCOPE>_BYTES)
#ifndef ASCX_EMU_MAX_QUE_BUFFERS_PER_POSITION
#define ASCX_EMU_MAX_QUE_BUFFERS_PER_POSITION 8
#endif
#ifndef ASCX_EMU_MAX_BUFFERS
#define ASCX_EMU_MAX_BUFFERS 64
#endif
#ifndef ASCX_EMU_ERROR_EXIT
#define ASCX_EMU_ERROR_EXIT 3
#endif
// Exit status when the host cannot give what the run needs (GM reservations).
#ifndef ASCX_EMU_RESOURCE_EXIT
#define ASCX_EMU_RESOURCE_EXIT 5
#endif

#define __aicore__
#define __global__
#define __gm__
#define __ubuf__
#define __cbuf__
#define __ca__
#define __cb__
#define __cc__
#define __inline__ inline
#ifndef GM_ADDR
#define GM_ADDR uint8_t*
#endif

// Hardware pipes (global names, as in kernels: PipeBarrier<PIPE_V>()).
enum pipe_t : int { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_FIX, PIPE_NUM_ };

namespace ascx_emu {

// Kernel source location, captured at the call site through a defaulted argument.
struct SrcLoc {
    const char* file;
    int line;
    SrcLoc(const char* f = __builtin_FILE(), int l = __builtin_LINE()) : file(f), line(l) {}
};
#define ASCX_LOC ::ascx_emu::SrcLoc loc = ::ascx_emu::SrcLoc()

inline const char* pipe_name(int p) {
    static const char* n[] = {"S", "V", "M", "MTE1", "MTE2", "MTE3", "ALL", "FIX"};
    return (p >= 0 && p < PIPE_NUM_) ? n[p] : "?";
}

// Physical local memories.
// BT: the bias table of an AIC core (TPosition::C2), read by Mmad's bias form.
enum Scope : int { SC_UB = 0, SC_L1, SC_L0A, SC_L0B, SC_L0C, SC_BT, SC_NUM, SC_GM = 100 };
inline const char* scope_name(int s) {
    static const char* n[] = {"UB", "L1", "L0A", "L0B", "L0C", "BT"};
    if (s == SC_GM) return "GM";
    return (s >= 0 && s < SC_NUM) ? n[s] : "?";
}
inline uint32_t scope_capacity(int s) {
    switch (s) {
        case SC_UB: return ASCX_EMU_UB_BYTES;
        case SC_L1: return ASCX_EMU_L1_BYTES;
        case SC_L0A: return ASCX_EMU_L0A_BYTES;
        case SC_L0B: return ASCX_EMU_L0B_BYTES;
        case SC_L0C: return ASCX_EMU_L0C_BYTES;
        case SC_BT: return ASCX_EMU_BT_BYTES;
        default: return 0;
    }
}
// Alignment of local addresses required by the hardware (bytes).
// (BT: 64 B, the bias-table copy's destination alignment, cce intrinsic copy_cbuf_to_bt page.)
inline uint32_t scope_align(int s) { return (s == SC_L0A || s == SC_L0B || s == SC_L0C) ? 512u : s == SC_BT ? 64u : 32u; }

enum class CoreKind { AIV, AIC };

struct CoreState;
inline CoreState*& cur_core() {
    static thread_local CoreState* c = nullptr;
    return c;
}

std::string core_desc();

[[noreturn]] inline void fail_v(const char* api, SrcLoc loc, const char* fmt, va_list ap) {
    char buf[2048];
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    std::string where = core_desc();
    std::fprintf(stderr, "ascx-emu: error: %s: %s\n  at %s:%d%s%s\n", api, buf, loc.file ? loc.file : "?", loc.line,
                 where.empty() ? "" : "\n  on core ", where.c_str());
    std::fflush(stderr);
    std::fflush(stdout);
    std::_Exit(ASCX_EMU_ERROR_EXIT);
}
[[noreturn]] inline void fail(const char* api, SrcLoc loc, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
[[noreturn]] inline void fail(const char* api, SrcLoc loc, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fail_v(api, loc, fmt, ap);
}

// A located warning, printed once per (api, location): the run goes on.
inline void warn_once(const char* api, SrcLoc loc, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
inline void warn_once(const char* api, SrcLoc loc, const char* fmt, ...) {
    static std::mutex mu;
    static std::set<std::pair<std::string, int>> seen;
    {
        std::lock_guard<std::mutex> g(mu);
        if (!seen.insert({std::string(api) + "@" + (loc.file ? loc.file : "?"), loc.line}).second) return;
    }
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    std::fprintf(stderr, "ascx-emu: warning: %s: %s\n  at %s:%d (reported once per location)\n", api, buf,
                 loc.file ? loc.file : "?", loc.line);
}

// ---------------------------------------------------------------- GM allocations
struct GmRegistry {
    std::mutex mu;
    std::map<uintptr_t, size_t> regions;  // start -> bytes
};
inline GmRegistry& gm_registry() {
    static GmRegistry r;
    return r;
}
// Returns true and the region when p lies inside a GmAlloc'ed region.
inline bool gm_region_of(const void* p, uintptr_t& start, size_t& len) {
    GmRegistry& r = gm_registry();
    std::lock_guard<std::mutex> g(r.mu);
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    auto it = r.regions.upper_bound(a);
    if (it == r.regions.begin()) return false;
    --it;
    if (a >= it->first && a <= it->first + it->second) {
        start = it->first;
        len = it->second;
        return true;
    }
    return false;
}

// ---------------------------------------------------------------- trace
struct TraceRec {
    std::string json;
};

inline std::string jstr(const char* s) {
    std::string o = "\"";
    for (const char* p = s; *p; ++p) {
        if (*p == '"' || *p == '\\') { o += '\\'; o += *p; }
        else if (static_cast<unsigned char>(*p) < 0x20) o += ' ';
        else o += *p;
    }
    return o + "\"";
}

// ---------------------------------------------------------------- buffers and cores
enum BufState : int { BUF_FREE = 0, BUF_ALLOCATED, BUF_ENQUEUED, BUF_DEQUEUED, BUF_TBUF };

// The bytes a TBufPool owns, [base, end) of one scope, and how far its own allocations reach.
struct PoolRegion {
    int scope = 0;
    uint32_t base = 0, end = 0, cur = 0;
    int bufs = 0, max_bufs = 0;
};

struct BufInfo {
    int scope = 0;
    uint32_t addr = 0, len = 0;
    int state = BUF_FREE;
    uint32_t gen = 1;  // bumped by FreeTensor: tensors of an old generation are stale
    int que = -1, idx = 0;
    std::string free_edge;  // edge id of the last FreeTensor (for the next AllocTensor)
    std::string enq_edge;
    tm::Edge free_tm, enq_tm;  // the same edges for the timing model / happens-before
};

struct CoreState {
    int block = 0, block_num = 1, sub = 0, sub_num = 1, group = 0;
    CoreKind kind = CoreKind::AIV;
    bool mix = false;
    std::string name;
    std::vector<uint8_t> mem[SC_NUM];
    std::deque<BufInfo> bufs;  // stable addresses
    int que_count = 0;
    // SetFlag/WaitFlag state per HardEvent and event id
    struct FlagSt { bool set = false; SrcLoc loc{nullptr, 0}; uint64_t n = 0; };
    std::map<std::pair<int, int>, FlagSt> flags;
    std::vector<std::string> trace;
    uint64_t seq = 0;
    bool tracing = false;
    int run = 0;
    uint64_t mask_lo = ~0ull, mask_hi = ~0ull;  // SetVectorMask state
    bool atomic_add = false;
    int cc_last_mode[16] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    uint64_t cc_wait_count[16] = {};
    uint64_t cc_set_count[16] = {};
    tm::TimingCore tm;  // pipe clocks, busy cycles, features, happens-before, hazards
};

inline std::string core_desc() {
    CoreState* c = cur_core();
    if (!c) return "";
    char b[160];
    std::snprintf(b, sizeof b, "%s (block %d of %d, %s, sub-block %d)", c->name.c_str(), c->block, c->block_num,
                  c->kind == CoreKind::AIV ? "AIV" : "AIC", c->sub);
    return b;
}

// Every API call of every core counts one step: a core waiting for a cross-core flag times
// out only when no core has made a step for the timeout (a slow launch whose other cores
// are still computing is not a hang; `cross_wait_until`).
inline std::atomic<uint64_t>& work_steps() {
    static std::atomic<uint64_t> n{0};
    return n;
}

inline CoreState& core(const char* api, SrcLoc loc) {
    CoreState* c = cur_core();
    if (!c) fail(api, loc, "called outside a kernel launched by ICPU_RUN_KF (no emulated core is running)");
    work_steps().fetch_add(1, std::memory_order_relaxed);
    return *c;
}

inline uint8_t* scope_mem(CoreState& c, int scope, const char* api, SrcLoc loc) {
    if (c.mem[scope].empty()) {
        bool ok = (c.kind == CoreKind::AIV) ? scope == SC_UB : scope != SC_UB;
        if (!ok)
            fail(api, loc, "%s does not exist on an %s core (910B split architecture: UB is on AIV cores; L1/L0A/L0B/L0C/BT "
                 "on AIC cores); choose the kernel mode with AscendC::SetKernelMode(KernelMode::...)",
                 scope_name(scope), c.kind == CoreKind::AIV ? "AIV" : "AIC");
        // 0xFF fill: reading never-written local memory yields NaN for float types.
        c.mem[scope].assign(scope_capacity(scope), 0xFF);
    }
    return c.mem[scope].data();
}

// The timing / hazard hook every instruction calls once (see timing.h): `op` on `pipe`
// with cost features `cost`, reading / writing the local bytes in `acc`.
inline void account(CoreState& c, int pipe, const char* op, SrcLoc loc, const tm::Cost& cost, std::initializer_list<tm::Acc> acc = {}) {
    static const uint32_t caps[SC_NUM] = {ASCX_EMU_UB_BYTES, ASCX_EMU_L1_BYTES, ASCX_EMU_L0A_BYTES, ASCX_EMU_L0B_BYTES, ASCX_EMU_L0C_BYTES,
                                          ASCX_EMU_BT_BYTES};
    tm::instr(c.tm, pipe, op, loc.file, loc.line, cost, acc, caps);
}
inline tm::Cost scalar_cost(int feature) {
    tm::Cost k;
    k.f[feature] = 1;
    return k;
}

// One trace record. `extra` is a JSON fragment starting with ',' (or empty).
inline void trace_emit(CoreState& c, int pipe, const char* op, const std::string& extra, SrcLoc loc) {
    if (!c.tracing) return;
    char head[512];
    const char* f = loc.file ? loc.file : "?";
    const char* base = std::strrchr(f, '/');
    base = base ? base + 1 : f;
    std::snprintf(head, sizeof head,
                  "{\"run\":%d,\"core\":\"%s\",\"block\":%d,\"kind\":\"%s\",\"sub\":%d,\"seq\":%llu,\"pipe\":\"%s\",\"op\":\"%s\"",
                  c.run, c.name.c_str(), c.block, c.kind == CoreKind::AIV ? "AIV" : "AIC", c.sub,
                  static_cast<unsigned long long>(c.seq), pipe_name(pipe), op);
    std::string s = head;
    s += extra;
    s += ",\"loc\":" + jstr((std::string(base) + ":" + std::to_string(loc.line)).c_str()) + "}";
    c.trace.push_back(std::move(s));
    ++c.seq;
}
inline void count_seq(CoreState& c) { if (!c.tracing) ++c.seq; }

inline std::string kv(const char* k, long long v) { return std::string(",\"") + k + "\":" + std::to_string(v); }
inline std::string ks(const char* k, const char* v) { return std::string(",\"") + k + "\":" + jstr(v); }

// A synchronisation record: sync = "set" | "wait" | "barrier".
inline void trace_sync(CoreState& c, int pipe, const char* op, const char* sync, const std::vector<std::string>& edges,
                       int from, int to, SrcLoc loc, const std::string& extra = "") {
    if (!c.tracing) return;
    std::string e = ks("sync", sync) + ",\"edges\":[";
    for (size_t i = 0; i < edges.size(); ++i) e += (i ? "," : "") + jstr(edges[i].c_str());
    e += "]";
    if (from >= 0) e += ks("from", pipe_name(from));
    if (to >= 0) e += ks("to", pipe_name(to));
    trace_emit(c, pipe, op, e + extra, loc);
}

// ---------------------------------------------------------------- kernel launch
enum class Mode { AIV, AIC, MIX };
inline Mode& kernel_mode() {
    static Mode m = Mode::AIV;
    return m;
}
// Set by AscendC::SetKernelMode: the host's choice wins over the mode inferred at build time.
inline bool& kernel_mode_explicit() {
    static bool set = false;
    return set;
}
// The mode of kernel `name` without a SetKernelMode call: the build's reading of the kernel
// source (transformer/emulator/kernel_mode.py: cube and vector positions, or the Matmul API,
// make a MIX kernel), passed as -DASCX_EMU_INFERRED_MODES="name:mix;other:aiv"; AIV if the
// build names no mode for it (a plain g++ build).
inline Mode launch_mode(const char* name) {
    (void)name;
    if (kernel_mode_explicit()) return kernel_mode();
#ifdef ASCX_EMU_INFERRED_MODES
    const std::string table = ASCX_EMU_INFERRED_MODES, key = std::string(name) + ":";
    for (size_t at = 0; at < table.size();) {
        size_t end = table.find(';', at);
        if (end == std::string::npos) end = table.size();
        const std::string entry = table.substr(at, end - at);
        if (entry.compare(0, key.size(), key) == 0) {
            const std::string m = entry.substr(key.size());
            return m == "mix" ? Mode::MIX : m == "aic" ? Mode::AIC : Mode::AIV;
        }
        at = end + 1;
    }
#endif
    return kernel_mode();
}

// Cross-core flag state shared by the cores of one launch.
struct CrossCore {
    std::mutex mu;
    std::condition_variable cv;
    int live = 0, blocked = 0;
    uint64_t progress = 0;  // bumped by every cross-core set and core exit (deadlock detection)
    // received[core name][flag] -> pending sets, per sender sub-block (index 0/1) for the AIC
    std::map<std::string, std::vector<uint64_t>> recv;
    std::map<std::string, std::vector<std::vector<std::string>>> recv_edges;
    // barrier counters for modes 0 / 1: key "mode0:AIV" or "mode1:g3" -> per flag number of sets
    std::map<std::string, std::vector<uint64_t>> bar;
    std::map<std::string, std::vector<std::vector<std::string>>> bar_edges;
    std::map<std::string, tm::Edge> xedge;  // timing of each cross-core edge id
    int n_aiv = 0, n_aic = 0;
    double timeout_s = 10.0;
};
inline CrossCore*& cross() {
    static CrossCore* x = nullptr;
    return x;
}

struct TraceSink {
    std::mutex mu;
    int runs = 0;
};
inline TraceSink& trace_sink() {
    static TraceSink t;
    return t;
}

void check_kernel_end(CoreState& c, SrcLoc loc);
// Runs the cores of an AIV-only or AIC-only launch one at a time, in block order, each in its
// own thread so that SyncAll can hand the turn to the next block (ascx_emu/multicore.h).
void run_blocks_in_turn(std::vector<std::unique_ptr<CoreState>>& cores, const std::function<void()>& body, SrcLoc loc);

// Thrown to end the kernel on the calling core before its last statement (the AIC of a MIX
// launch serves the Matmul objects inside REGIST_MATMUL_OBJ and returns there, lib/matmul_intf.h).
struct KernelReturn {};

inline void run_one(CoreState& c, const std::function<void()>& body, SrcLoc loc) {
    cur_core() = &c;
    try {
        body();
    } catch (const KernelReturn&) {
    }
    check_kernel_end(c, loc);
    cur_core() = nullptr;
}

inline void flush_trace(std::vector<std::unique_ptr<CoreState>>& cores) {
    const char* path = std::getenv("ASCX_TRACE");
    if (!path || !*path) return;
    TraceSink& t = trace_sink();
    std::lock_guard<std::mutex> g(t.mu);
    FILE* f = std::fopen(path, t.runs == 1 ? "w" : "a");
    if (!f) {
        std::fprintf(stderr, "ascx-emu: warning: cannot open trace file %s\n", path);
        return;
    }
    for (auto& c : cores)
        for (auto& s : c->trace) { std::fputs(s.c_str(), f); std::fputc('\n', f); }
    std::fclose(f);
}

// After a launch: schedule its blocks on the target's cores (waves), add the shared-HBM
// bound and the launch overhead, merge hot lines / hazards / timeline into the process
// totals, write ASCX_PROFILE / ASCX_TIMELINE, and stop on hazards (ASCX_HAZARDS=error).
inline void finish_launch(const char* name, Mode m, uint32_t block_dim, std::vector<std::unique_ptr<CoreState>>& cores) {
    const tm::Config& cfg = tm::config();
    tm::Totals& tot = tm::totals();
    tm::LaunchRec L;
    L.name = name;
    L.mode = m == Mode::AIV ? "AIV" : m == Mode::AIC ? "AIC" : "MIX";
    L.block_dim = static_cast<int>(block_dim);
    L.slots = (m == Mode::AIV) ? cfg.aiv_cores : cfg.aic_cores;
    std::vector<double> bt(block_dim, 0.0);
    for (auto& c : cores) {
        bt[static_cast<size_t>(c->block)] = std::max(bt[static_cast<size_t>(c->block)], c->tm.end());
        L.gm_bytes += c->tm.gm_bytes;
    }
    // blocks in index order, each to the earliest free core slot
    std::vector<double> slot(static_cast<size_t>(std::max(1, L.slots)), 0.0);
    std::vector<double> bstart(block_dim, 0.0);
    for (uint32_t b = 0; b < block_dim; ++b) {
        auto it = std::min_element(slot.begin(), slot.end());
        bstart[b] = *it + cfg.block_dispatch;
        *it = bstart[b] + bt[b];
    }
    L.makespan = *std::max_element(slot.begin(), slot.end());
    // L2 (docs/timing.md): when the launch's GM footprint fits in L2, every re-touch hits and
    // HBM carries only the footprint. Otherwise an LRU over 512 B lines, fed with every
    // core's touches in time order, decides which touches miss; HBM carries the missing
    // share of the GM bytes. Every GM byte also crosses L2, at its own aggregate bandwidth.
    {
        // a core that stopped recording (`gm_touch`) touched more lines than the model keeps:
        // the footprint is then reported as that lower bound and HBM carries every byte
        bool over = false;
        std::vector<tm::GmTouch> lines;
        for (auto& c : cores) {
            over = over || c->tm.gm_lines_over;
            double off = bstart[static_cast<size_t>(c->block)];
            if (!over)
                for (const tm::GmTouch& g : c->tm.gm_lines) lines.push_back(tm::GmTouch{g.t + off, g.line});
            std::vector<tm::GmTouch>().swap(c->tm.gm_lines);
        }
        std::vector<uint64_t> uniq(lines.size());  // the distinct lines, sorted: footprint and LRU
        for (size_t i = 0; i < lines.size(); ++i) uniq[i] = lines[i].line;
        std::sort(uniq.begin(), uniq.end());
        uniq.erase(std::unique(uniq.begin(), uniq.end()), uniq.end());
        L.footprint = static_cast<double>(uniq.size()) * 512.0;
        if (over) L.footprint = std::max(L.footprint, static_cast<double>(tm::gm_touch_cap()) * 512.0);
        if (cfg.l2_bytes <= 0 || over) {
            L.hbm_bytes = L.gm_bytes;
            L.l2_miss = 1.0;
        } else if (L.footprint <= cfg.l2_bytes) {
            L.hbm_bytes = std::min(L.footprint, L.gm_bytes);
            L.l2_miss = L.gm_bytes > 0 ? L.hbm_bytes / L.gm_bytes : 0.0;
        } else {
            L.l2_miss = tm::l2_miss_fraction(lines, uniq, cfg.l2_bytes);
            L.hbm_bytes = std::max(std::min(L.footprint, L.gm_bytes), L.l2_miss * L.gm_bytes);
        }
    }
    L.hbm_cycles = cfg.hbm_bytes_per_cycle > 0 ? L.hbm_bytes / cfg.hbm_bytes_per_cycle : 0.0;
    L.l2_cycles = cfg.l2_bytes_per_cycle > 0 ? L.gm_bytes / cfg.l2_bytes_per_cycle : 0.0;
    L.launch_cycles = cfg.launch + (m == Mode::MIX ? cfg.launch_mix : 0.0);
    L.cycles = L.launch_cycles + std::max(L.makespan, std::max(L.hbm_cycles, L.l2_cycles));
    L.offset = tot.cycles;
    std::string cj;
    for (size_t i = 0; i < cores.size(); ++i) {
        tm::TimingCore& t = cores[i]->tm;
        cj += std::string(i ? "," : "") + "{\"name\":\"" + cores[i]->name + "\",\"kind\":\"" +
              (cores[i]->kind == CoreKind::AIV ? "AIV" : "AIC") + "\",\"block\":" + std::to_string(cores[i]->block) +
              ",\"end\":" + tm::num(t.end()) + ",\"scalar_cycles\":" + tm::num(t.scalar_cycles) + ",\"gm_bytes\":" + tm::num(t.gm_bytes) +
              ",\"busy\":{";
        bool first = true;
        for (int p = 0; p < tm::NP; ++p) {
            if (p == PIPE_ALL) continue;
            cj += std::string(first ? "" : ",") + "\"" + tm::pname(p) + "\":" + tm::num(t.busy[p]);
            first = false;
        }
        cj += "},\"features\":{";
        first = true;
        for (int p = 0; p < tm::NP; ++p) {
            if (p == PIPE_ALL) continue;
            cj += std::string(first ? "" : ",") + "\"" + tm::pname(p) + "\":{";
            first = false;
            bool f2 = true;
            for (int k = 0; k < tm::NF; ++k) {
                if (!*tm::feat_name(p, k)) continue;
                cj += std::string(f2 ? "" : ",") + "\"" + tm::feat_name(p, k) + "\":" + tm::num(t.feat[p][k]);
                f2 = false;
            }
            cj += "}";
        }
        cj += "}}";
        // hot lines
        for (size_t j = 0; j < t.hot_main.size(); ++j)
            if (t.hot_main[j] > 0) {
                auto& v = tot.hot[{tm::basename_of(t.main_file), static_cast<int>(j / tm::NP)}];
                if (v.empty()) v.assign(tm::NP, 0.0);
                v[j % tm::NP] += t.hot_main[j];
            }
        for (auto& kv : t.hot_other) {
            auto& v = tot.hot[{tm::basename_of(kv.first.first), kv.first.second}];
            if (v.empty()) v.assign(tm::NP, 0.0);
            for (int p = 0; p < tm::NP; ++p) v[static_cast<size_t>(p)] += kv.second[static_cast<size_t>(p)];
        }
        // hazards (described with both source lines)
        for (auto& kv : t.hazards) {
            const tm::HazardRec& h = kv.second;
            auto l1 = t.locs[h.loc1], l2 = t.locs[h.loc2];
            char line[1024];
            std::snprintf(line, sizeof line,
                          "{\"kind\":\"%s\",\"buffer\":\"%s[0x%llx, 0x%llx)\",\"core\":%d,\"core_name\":\"%s\",\"first_pipe\":\"%s\","
                          "\"first_line\":\"%s:%d\",\"second_pipe\":\"%s\",\"second_line\":\"%s:%d\",\"count\":%llu}",
                          h.kind, scope_name(h.scope), (unsigned long long)h.lo, (unsigned long long)h.hi, static_cast<int>(i),
                          cores[i]->name.c_str(), tm::pname(h.p1), tm::jesc(tm::basename_of(l1.first)).c_str(), l1.second,
                          tm::pname(h.p2), tm::jesc(tm::basename_of(l2.first)).c_str(), l2.second, (unsigned long long)h.count);
            if (tot.hazard_lines.size() < 200) tot.hazard_lines.push_back(line);
            if (cfg.hazards == tm::HZ_ERROR && tot.hazard_lines.size() <= 20)
                std::fprintf(stderr,
                             "ascx-emu: error: sync hazard: %s on %s[0x%llx, 0x%llx) on core %s: %s at %s:%d and %s at %s:%d are not "
                             "ordered by any flag, queue or barrier (%llu conflicting 32 B granule accesses)\n",
                             h.kind, scope_name(h.scope), (unsigned long long)h.lo, (unsigned long long)h.hi, cores[i]->name.c_str(),
                             tm::pname(h.p1), l1.first, l1.second, tm::pname(h.p2), l2.first, l2.second, (unsigned long long)h.count);
        }
        // timeline slices, offset by the launch and the block's wave start
        if (!cfg.timeline_path.empty()) {
            double off = L.offset + L.launch_cycles + bstart[static_cast<size_t>(cores[i]->block)];
            double us = 1.0 / cfg.clock_mhz;
            int pid = static_cast<int>(tot.launches.size() * 100000 + i);
            std::string& tl = tot.timeline;
            auto add = [&](const std::string& e) { tl += (tl.empty() ? "" : ",\n") + e; };
            add("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + std::to_string(pid) + ",\"args\":{\"name\":\"" + L.name + " " +
                cores[i]->name + "\"}}");
            for (int p = 0; p < tm::NP; ++p)
                if (p != PIPE_ALL)
                    add("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(p) +
                        ",\"args\":{\"name\":\"" + tm::pname(p) + "\"}}");
            for (auto& e : t.events)
                add("{\"ph\":\"X\",\"name\":\"" + std::string(e.op) + "\",\"pid\":" + std::to_string(pid) + ",\"tid\":" +
                    std::to_string(e.pipe) + ",\"ts\":" + tm::num((off + e.t) * us) + ",\"dur\":" + tm::num(std::max(e.dur, 0.5) * us) +
                    ",\"args\":{\"line\":" + std::to_string(e.line) + "}}");
            for (auto& f : t.flows) {
                std::string id = std::to_string(tot.flow_ids++);
                int fpid = static_cast<int>(tot.launches.size() * 100000 + static_cast<size_t>(f.from_core));
                double foff = L.offset + L.launch_cycles + bstart[static_cast<size_t>(cores[static_cast<size_t>(f.from_core)]->block)];
                add("{\"ph\":\"s\",\"name\":\"sync\",\"cat\":\"sync\",\"id\":" + id + ",\"pid\":" + std::to_string(fpid) +
                    ",\"tid\":" + std::to_string(f.from_pipe) + ",\"ts\":" + tm::num((foff + f.t_from) * us) + "}");
                add("{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"sync\",\"cat\":\"sync\",\"id\":" + id + ",\"pid\":" +
                    std::to_string(pid) + ",\"tid\":" + std::to_string(f.to_pipe) + ",\"ts\":" + tm::num((off + f.t_to) * us) + "}");
            }
            if (tm::event_budget() == 0) tot.timeline_truncated = true;
        }
    }
    L.cores_json = cj;
    tot.cycles += L.cycles;
    tot.launches.push_back(L);
    if (!cfg.profile_path.empty()) {
        std::string o = "{\"model\":\"ascx-pipe-2\",\"timing\":" + std::string(cfg.timing ? "true" : "false") +
                        ",\"timing_only\":" + (cfg.timing_only ? "true" : "false") + ",\"clock_mhz\":" + tm::num(cfg.clock_mhz) +
                        ",\"cycles\":" + tm::num(tot.cycles) + ",\"launches\":[";
        for (size_t i = 0; i < tot.launches.size(); ++i) {
            auto& l = tot.launches[i];
            o += std::string(i ? "," : "") + "{\"name\":\"" + tm::jesc(l.name) + "\",\"mode\":\"" + l.mode + "\",\"block_dim\":" +
                 std::to_string(l.block_dim) + ",\"slots\":" + std::to_string(l.slots) + ",\"cycles\":" + tm::num(l.cycles) +
                 ",\"makespan\":" + tm::num(l.makespan) + ",\"hbm_cycles\":" + tm::num(l.hbm_cycles) + ",\"gm_bytes\":" +
                 tm::num(l.gm_bytes) + ",\"footprint_bytes\":" + tm::num(l.footprint) + ",\"hbm_bytes\":" + tm::num(l.hbm_bytes) +
                 ",\"l2_cycles\":" + tm::num(l.l2_cycles) + ",\"l2_miss\":" + tm::num(l.l2_miss) +
                 ",\"launch_cycles\":" + tm::num(l.launch_cycles) +
                 ",\"launch_cycles\":" + tm::num(cfg.launch) + ",\"cores\":[" + l.cores_json + "]}";
        }
        o += "],\"hot\":[";
        std::vector<std::pair<double, std::string>> hot;
        for (auto& kv : tot.hot)
            for (int p = 0; p < tm::NP; ++p)
                if (kv.second[static_cast<size_t>(p)] > 0)
                    hot.emplace_back(kv.second[static_cast<size_t>(p)],
                                     "{\"line\":\"" + tm::jesc(kv.first.first) + ":" + std::to_string(kv.first.second) + "\",\"pipe\":\"" +
                                         tm::pname(p) + "\",\"cycles\":" + tm::num(kv.second[static_cast<size_t>(p)]) + "}");
        std::sort(hot.begin(), hot.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
        for (size_t i = 0; i < hot.size() && i < 40; ++i) o += (i ? "," : "") + hot[i].second;
        o += "],\"hazards\":[";
        for (size_t i = 0; i < tot.hazard_lines.size(); ++i) o += (i ? "," : "") + tot.hazard_lines[i];
        o += "]}\n";
        std::string tmp = cfg.profile_path + ".tmp";
        if (FILE* f = std::fopen(tmp.c_str(), "w")) {
            std::fputs(o.c_str(), f);
            std::fclose(f);
            std::rename(tmp.c_str(), cfg.profile_path.c_str());
        }
    }
    if (!cfg.timeline_path.empty()) {
        if (FILE* f = std::fopen(cfg.timeline_path.c_str(), "w")) {
            std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", f);
            std::fputs(tot.timeline.c_str(), f);
            std::fprintf(f, "\n],\"otherData\":{\"truncated\":%s}}\n", tot.timeline_truncated ? "true" : "false");
            std::fclose(f);
        }
    }
    if (cfg.hazards == tm::HZ_ERROR && !tot.hazard_lines.empty()) {
        std::fprintf(stderr, "ascx-emu: error: %zu sync hazard(s): the kernel is correct here only because the emulator runs in "
                     "program order; on the device these accesses race (add the missing SetFlag/WaitFlag, queue or PipeBarrier)\n",
                     tot.hazard_lines.size());
        std::fflush(stderr);
        std::fflush(stdout);
        std::_Exit(ASCX_EMU_HAZARD_EXIT);
    }
}

inline void launch(const char* name, uint32_t block_dim, const std::function<void()>& body, SrcLoc loc) {
    tm::config();  // read the timing / hazard environment before any core thread starts
    if (block_dim == 0 || block_dim > 65535) fail("ICPU_RUN_KF", loc, "blockDim %u out of range [1, 65535]", block_dim);
    const char* tp = std::getenv("ASCX_TRACE");
    bool tracing = tp && *tp;
    int run;
    {
        TraceSink& t = trace_sink();
        std::lock_guard<std::mutex> g(t.mu);
        run = t.runs++;
    }
    Mode m = launch_mode(name);
    std::vector<std::unique_ptr<CoreState>> cores;
    auto mk = [&](int block, CoreKind k, int sub, int sub_num) {
        auto c = std::make_unique<CoreState>();
        c->block = block;
        c->block_num = static_cast<int>(block_dim);
        c->group = block;
        c->kind = k;
        c->sub = sub;
        c->sub_num = sub_num;
        c->mix = (m == Mode::MIX);
        c->tracing = tracing;
        c->run = run;
        char b[64];
        std::snprintf(b, sizeof b, "b%d.%s%d", block, k == CoreKind::AIV ? "aiv" : "aic", sub);
        c->name = b;
        c->tm.id = static_cast<int>(cores.size());
        cores.push_back(std::move(c));
    };
    for (uint32_t b = 0; b < block_dim; ++b) {
        int bi = static_cast<int>(b);
        if (m == Mode::AIV) mk(bi, CoreKind::AIV, 0, 1);
        else if (m == Mode::AIC) mk(bi, CoreKind::AIC, 0, 1);
        else { mk(bi, CoreKind::AIC, 0, 1); mk(bi, CoreKind::AIV, 0, 2); mk(bi, CoreKind::AIV, 1, 2); }
    }
    CrossCore xc;
    const char* to = std::getenv("ASCX_EMU_DEADLOCK_TIMEOUT");
    if (to && *to) xc.timeout_s = std::atof(to);
    for (auto& c : cores) (c->kind == CoreKind::AIV ? xc.n_aiv : xc.n_aic)++;
    cross() = &xc;
    if (m != Mode::MIX) {
        xc.live = 1;
        run_blocks_in_turn(cores, body, loc);
    } else {
        xc.live = static_cast<int>(cores.size());
        std::vector<std::thread> th;
        for (auto& c : cores) {
            CoreState* cp = c.get();
            th.emplace_back([cp, &body, &xc, loc] {
                run_one(*cp, body, loc);
                std::lock_guard<std::mutex> g(xc.mu);
                xc.live--;
                xc.progress++;
                xc.cv.notify_all();
            });
        }
        for (auto& t : th) t.join();
    }
    cross() = nullptr;
    flush_trace(cores);
    finish_launch(name, m, block_dim, cores);
}

}  // namespace ascx_emu

// ====================================================================== AscendC API
namespace AscendC {

using ascx_emu::SrcLoc;

constexpr int32_t ONE_BLK_SIZE = 32;
constexpr int32_t ONE_REPEAT_BYTE_SIZE = 256;
constexpr int32_t DEFAULT_BLK_NUM = 8;
constexpr int32_t DEFAULT_BLK_STRIDE = 1;
constexpr int32_t DEFAULT_REPEAT_STRIDE = 8;
constexpr int32_t BLOCK_CUBE = 16;
constexpr int32_t CUBE_MAX_SIZE = 256;
constexpr int32_t MAX_REPEAT_TIMES = 255;
constexpr uint64_t MASK_PLACEHOLDER = 0;
constexpr int32_t TOTAL_UB_SIZE = ASCX_EMU_UB_BYTES;
constexpr int32_t TOTAL_L1_SIZE = ASCX_EMU_L1_BYTES;
constexpr int32_t TOTAL_L0A_SIZE = ASCX_EMU_L0A_BYTES;
constexpr int32_t TOTAL_L0B_SIZE = ASCX_EMU_L0B_BYTES;
constexpr int32_t TOTAL_L0C_SIZE = ASCX_EMU_L0C_BYTES;

enum class TPosition : uint8_t { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM, SHM = SPM, TSCM, C2PIPE2GM, C2PIPE2LOCAL, MAX };
using QuePosition = TPosition;
// The physical memories (LocalMemAllocator's template argument, ops_more.h).
enum class Hardware : uint8_t { GM, UB, L1, L0A, L0B, L0C, BIAS, FIXBUF, MAX };

enum class KernelMode { MIX_MODE = 0, AIC_MODE, AIV_MODE, MIX_AIC_1_1 };
inline void SetKernelMode(KernelMode m) {
    ascx_emu::kernel_mode_explicit() = true;
    ascx_emu::kernel_mode() = (m == KernelMode::AIV_MODE) ? ascx_emu::Mode::AIV
                              : (m == KernelMode::AIC_MODE) ? ascx_emu::Mode::AIC : ascx_emu::Mode::MIX;
}

constexpr int32_t AIC = 1;
constexpr int32_t AIV = 2;
constexpr int32_t MIX = 3;

inline const char* position_name(TPosition p) {
    switch (p) {
        case TPosition::GM: return "GM";
        case TPosition::A1: return "A1";
        case TPosition::A2: return "A2";
        case TPosition::B1: return "B1";
        case TPosition::B2: return "B2";
        case TPosition::C1: return "C1";
        case TPosition::C2: return "C2";
        case TPosition::CO1: return "CO1";
        case TPosition::CO2: return "CO2";
        case TPosition::VECIN: return "VECIN";
        case TPosition::VECOUT: return "VECOUT";
        case TPosition::VECCALC: return "VECCALC";
        case TPosition::TSCM: return "TSCM";
        default: return "?";
    }
}
constexpr int position_scope(TPosition p) {
    switch (p) {
        case TPosition::VECIN: case TPosition::VECOUT: case TPosition::VECCALC: case TPosition::CO2: return ascx_emu::SC_UB;
        case TPosition::A1: case TPosition::B1: case TPosition::C1: case TPosition::TSCM: return ascx_emu::SC_L1;
        case TPosition::A2: return ascx_emu::SC_L0A;
        case TPosition::B2: return ascx_emu::SC_L0B;
        case TPosition::CO1: return ascx_emu::SC_L0C;
        case TPosition::C2: return ascx_emu::SC_BT;
        default: return -1;
    }
}
// Producer / consumer pipe of a queue position (EnQue sets on the producer pipe and
// DeQue waits on the consumer pipe; FreeTensor / AllocTensor the reverse).
inline int producer_pipe(TPosition p) {
    switch (p) {
        case TPosition::VECIN: case TPosition::A1: case TPosition::B1: case TPosition::C1: case TPosition::TSCM: return PIPE_MTE2;
        case TPosition::VECOUT: case TPosition::VECCALC: return PIPE_V;
        case TPosition::A2: case TPosition::B2: case TPosition::C2: return PIPE_MTE1;
        case TPosition::CO1: return PIPE_M;
        case TPosition::CO2: return PIPE_FIX;
        default: return PIPE_S;
    }
}
inline int consumer_pipe(TPosition p) {
    switch (p) {
        case TPosition::VECIN: case TPosition::VECCALC: return PIPE_V;
        case TPosition::VECOUT: case TPosition::CO2: return PIPE_MTE3;
        case TPosition::A1: case TPosition::B1: case TPosition::C1: case TPosition::TSCM: return PIPE_MTE1;
        case TPosition::A2: case TPosition::B2: case TPosition::C2: return PIPE_M;
        case TPosition::CO1: return PIPE_FIX;
        default: return PIPE_S;
    }
}

inline int64_t GetBlockIdx() {
    ascx_emu::CoreState* c = ascx_emu::cur_core();
    if (!c) return 0;
    // In mix mode an AIV core reports blockIdx * 2 + subBlockIdx (its own vector-core index).
    if (c->mix && c->kind == ascx_emu::CoreKind::AIV) return c->block * 2 + c->sub;
    return c->block;
}
inline int64_t GetBlockNum() {
    ascx_emu::CoreState* c = ascx_emu::cur_core();
    return c ? c->block_num : 1;
}
inline int64_t GetSubBlockIdx() {
    ascx_emu::CoreState* c = ascx_emu::cur_core();
    return c ? c->sub : 0;
}
inline int64_t GetSubBlockNum() {
    ascx_emu::CoreState* c = ascx_emu::cur_core();
    return c ? c->sub_num : 1;
}
inline int64_t GetTaskRation() {
    ascx_emu::CoreState* c = ascx_emu::cur_core();
    return (c && c->mix && c->kind == ascx_emu::CoreKind::AIV) ? 2 : 1;
}
inline int32_t GetCoreKind() {
    ascx_emu::CoreState* c = ascx_emu::cur_core();
    return (c && c->kind == ascx_emu::CoreKind::AIC) ? AIC : AIV;
}

// ---------------------------------------------------------------- GlobalTensor
enum class CacheMode : uint8_t { CACHE_MODE_DISABLE = 0, CACHE_MODE_NORMAL = 1 };
enum CacheRwMode { READ = 1, WRITE = 2, RW = 3 };
template <typename T> class GlobalTensor {
public:
    using PrimType = T;
    GlobalTensor() = default;
    // An L2 placement hint: recorded, no effect on results or on the timing model (which
    // has no per-tensor L2 policy).
    template <CacheRwMode rwMode = CacheRwMode::RW> void SetL2CacheHint(CacheMode mode) { cache_ = mode; }
    CacheMode GetL2CacheHint_() const { return cache_; }
    void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize) {
        ptr_ = buffer;
        size_ = bufferSize;
        sized_ = true;
    }
    void SetGlobalBuffer(__gm__ T* buffer) {
        ptr_ = buffer;
        size_ = 0;
        sized_ = false;
    }
    GlobalTensor operator[](uint64_t offset) const {
        GlobalTensor g(*this);
        g.ptr_ = ptr_ + offset;
        if (sized_) g.size_ = offset <= size_ ? size_ - offset : 0;
        g.off_ = off_ + offset;
        if (sized_ && offset > size_) g.bad_off_ = true;
        return g;
    }
    T GetValue(uint64_t offset, ASCX_LOC) const {
        Check("GlobalTensor::GetValue", offset, 1, loc);
        GmScalar("GetValue", ptr_ + offset, loc);
        return ptr_[offset];
    }
    void SetValue(uint64_t offset, T value, ASCX_LOC) {
        Check("GlobalTensor::SetValue", offset, 1, loc);
        GmScalar("SetValue", ptr_ + offset, loc);
        ptr_[offset] = value;
    }
    T& operator()(uint64_t offset) { Check("GlobalTensor::operator()", offset, 1, SrcLoc{"?", 0}); return ptr_[offset]; }
    uint64_t GetSize() const { return size_; }
    __gm__ T* GetPhyAddr() const { return ptr_; }
    __gm__ T* GetPhyAddr(uint64_t offset) const { return ptr_ + offset; }
    __gm__ T* address_() const { return ptr_; }
    // Bounds check of elements [offset, offset + count), as the device faults: outside the
    // GmAlloc region holding the buffer is an error; past SetGlobalBuffer's size but inside the
    // allocation only a warning (the device reads and writes there: public samples over-read
    // their view inside its buffer on purpose), unless ASCX_EMU_STRICT_GM_VIEWS is defined
    // (emitted kernels: a view overrun is our bug). Outside any known allocation (host memory
    // not from GmAlloc) the view's size is the only bound, so it is an error.
    void Check(const char* api, uint64_t offset, uint64_t count, SrcLoc loc) const {
        if (!ptr_) ascx_emu::fail(api, loc, "GlobalTensor used before SetGlobalBuffer");
        const bool past_view = sized_ && (bad_off_ || offset + count > size_);
        uintptr_t st = 0;
        size_t len = 0;
        bool in_alloc = !past_view;
        const bool known = ascx_emu::gm_region_of(ptr_, st, len);
        uintptr_t a = reinterpret_cast<uintptr_t>(ptr_ + offset), e = reinterpret_cast<uintptr_t>(ptr_ + offset + count);
        if (known) in_alloc = a >= st && e <= st + len;
        if (past_view) {
            char view[512];
            std::snprintf(view, sizeof view,
                          "GM access out of bounds: elements [%llu, %llu) of a GlobalTensor<%s> view whose SetGlobalBuffer size "
                          "leaves %llu elements (view offset %llu)",
                          (unsigned long long)offset, (unsigned long long)(offset + count), ascx_emu::type_name<T>(),
                          (unsigned long long)size_, (unsigned long long)off_);
#ifndef ASCX_EMU_STRICT_GM_VIEWS
            if (known && in_alloc) {
                ascx_emu::warn_once(api, loc, "%s; bytes [%llu, %llu) are inside the %llu-byte GmAlloc allocation, which the "
                                    "device reads and writes (only outside it is an error)", view,
                                    (unsigned long long)(a - st), (unsigned long long)(e - st), (unsigned long long)len);
                return;
            }
#endif
            if (known && !in_alloc)
                ascx_emu::fail(api, loc, "%s, and bytes [%llu, %llu) are outside its %llu-byte GmAlloc allocation", view,
                               (unsigned long long)(a - st), (unsigned long long)(e - st), (unsigned long long)len);
            ascx_emu::fail(api, loc, "%s", view);
        }
        if (known && !in_alloc)
            ascx_emu::fail(api, loc, "GM access out of the GmAlloc'ed region: bytes [%llu, %llu) of a %llu-byte allocation",
                           (unsigned long long)(a - st), (unsigned long long)(e - st), (unsigned long long)len);
    }

private:
    static void GmScalar(const char* op, const T* p, SrcLoc loc) {  // a scalar GM access: priced on S
        if (ascx_emu::CoreState* c = ascx_emu::cur_core()) {
            ascx_emu::tm::gm_touch(c->tm, reinterpret_cast<uintptr_t>(p), sizeof(T));
            ascx_emu::account(*c, PIPE_S, op, loc, ascx_emu::scalar_cost(ascx_emu::tm::S_GM));
        }
    }
    T* ptr_ = nullptr;
    uint64_t size_ = 0, off_ = 0;
    bool sized_ = false, bad_off_ = false;
    CacheMode cache_ = CacheMode::CACHE_MODE_NORMAL;
};

// ---------------------------------------------------------------- ShapeInfo
// A tensor's shape (up to 8 dimensions): what DumpTensor prints and LocalTensor::SetShapeInfo
// keeps; the emulator's instructions take their sizes from their arguments, not from it.
struct ShapeInfo {
    ShapeInfo() = default;
    ShapeInfo(uint8_t dimNum, const uint32_t* dims) : shapeDim(dimNum) {
        for (uint8_t i = 0; i < dimNum && i < 8; ++i) shape[i] = dims[i];
    }
    uint8_t shapeDim = 0;
    uint32_t shape[8] = {};
};

// ---------------------------------------------------------------- LocalTensor
template <typename T> class LocalTensor {
public:
    using PrimType = T;
    LocalTensor() = default;
    LocalTensor(ascx_emu::CoreState* c, ascx_emu::BufInfo* b, TPosition pos, uint32_t addr, uint32_t bytes)
        : core_(c), buf_(b), gen_(b ? b->gen : 0), pos_(pos), scope_(position_scope(pos)), addr_(addr),
          begin_(b ? b->addr : addr), end_(b ? b->addr + b->len : addr + bytes), size_(bytes / sizeof(T)) {}
    // Static tensor programming: tileSize elements of memory `pos` at byte `addr` (its page: addr
    // 32-byte aligned, addr plus the bytes inside the memory); defined in ops_more.h.
    LocalTensor(TPosition pos, uint32_t addr, uint32_t tileSize, ASCX_LOC);

    LocalTensor operator[](uint32_t offset) const {
        LocalTensor t(*this);
        t.addr_ = addr_ + offset * static_cast<uint32_t>(sizeof(T));
        t.size_ = offset <= size_ ? size_ - offset : 0;
        return t;
    }
    template <typename U> LocalTensor<U> ReinterpretCast() const {
        LocalTensor<U> u;
        u.core_ = core_; u.buf_ = buf_; u.gen_ = gen_; u.pos_ = pos_; u.scope_ = scope_; u.addr_ = addr_;
        u.begin_ = begin_; u.end_ = end_;
        u.size_ = static_cast<uint32_t>((static_cast<uint64_t>(size_) * sizeof(T)) / sizeof(U));
        return u;
    }
    T GetValue(uint32_t offset, ASCX_LOC) const {
        T v;
        std::memcpy(static_cast<void*>(&v), Ptr("LocalTensor::GetValue", offset, 1, loc), sizeof(T));
        ascx_emu::account(*core_, PIPE_S, "GetValue", loc, ascx_emu::scalar_cost(ascx_emu::tm::S_LOCAL),
                          {ascx_emu::tm::Acc{scope_, addr_ + offset * static_cast<int64_t>(sizeof(T)), addr_ + (offset + 1) * static_cast<int64_t>(sizeof(T)), false}});
        if (core_->tracing) ascx_emu::trace_emit(*core_, PIPE_S, "GetValue", ascx_emu::kv("elems", 1), loc);
        return v;
    }
    void SetValue(uint32_t offset, T value, ASCX_LOC) const {
        std::memcpy(static_cast<void*>(Ptr("LocalTensor::SetValue", offset, 1, loc)), static_cast<const void*>(&value), sizeof(T));
        ascx_emu::account(*core_, PIPE_S, "SetValue", loc, ascx_emu::scalar_cost(ascx_emu::tm::S_LOCAL),
                          {ascx_emu::tm::Acc{scope_, addr_ + offset * static_cast<int64_t>(sizeof(T)), addr_ + (offset + 1) * static_cast<int64_t>(sizeof(T)), true}});
        if (core_->tracing) ascx_emu::trace_emit(*core_, PIPE_S, "SetValue", ascx_emu::kv("elems", 1), loc);
    }
    // operator(): a reference to element `offset` (a left value as SetValue, a right value as
    // GetValue). Priced as one scalar local access, and counted as a write for the hazard check
    // (the emulator cannot tell which way the reference is used: the stricter reading).
    T& operator()(uint32_t offset) const {
        T* p = Ptr("LocalTensor::operator()", offset, 1, SrcLoc{"LocalTensor::operator()", 0});
        ascx_emu::account(*core_, PIPE_S, "operator()", SrcLoc{"LocalTensor::operator()", 0}, ascx_emu::scalar_cost(ascx_emu::tm::S_LOCAL),
                          {ascx_emu::tm::Acc{scope_, addr_ + offset * static_cast<int64_t>(sizeof(T)), addr_ + (offset + 1) * static_cast<int64_t>(sizeof(T)), true}});
        return *p;
    }
    // SetAddrWithOffset: this tensor starts `offset` elements of src's type after src's start,
    // inside src's buffer (the public page: the offset counts the old tensor's elements).
    template <typename S> void SetAddrWithOffset(LocalTensor<S>& src, uint32_t offset) {
        core_ = src.core_; buf_ = src.buf_; gen_ = src.gen_; pos_ = src.pos_; scope_ = src.scope_;
        begin_ = src.begin_; end_ = src.end_;
        addr_ = src.addr_ + offset * static_cast<uint32_t>(sizeof(S));
        size_ = addr_ <= end_ ? (end_ - addr_) / static_cast<uint32_t>(sizeof(T)) : 0;
    }
    // `dst = a + b` and its kin (the whole-tensor forms of Add, Sub, Mul, Div; ops_more.h): the
    // expression is evaluated into this tensor over this tensor's size.
    template <typename E, typename = typename E::ascx_tensor_expr> LocalTensor& operator=(const E& e) {
        e.assign_to(*this);
        return *this;
    }
    LocalTensor(const LocalTensor&) = default;
    LocalTensor& operator=(const LocalTensor&) = default;
    void SetShapeInfo(const ShapeInfo& info) { shape_ = info; }
    ShapeInfo GetShapeInfo() const { return shape_; }
    uint32_t GetSize() const { return size_; }
    void SetBufferLen(uint32_t dataLen) { size_ = dataLen; }  // in elements, as its parameter table says
    uint32_t GetLength() const { return size_ * static_cast<uint32_t>(sizeof(T)); }
    void SetSize(uint32_t s) { size_ = s; }
    uint64_t GetPhyAddr() const { return addr_; }
    uint64_t GetPhyAddr(uint32_t offset) const { return addr_ + offset * sizeof(T); }
    TPosition GetPosition() const { return pos_; }
    int32_t GetUserTag() const { return tag_; }
    void SetUserTag(int32_t t) { tag_ = t; }

    // ---- emulator internals (used by the instruction implementations)
    int scope() const { return scope_; }
    uint32_t addr() const { return addr_; }
    ascx_emu::BufInfo* buf() const { return buf_; }
    ascx_emu::CoreState* owner() const { return core_; }
    // Validated pointer to elements [offset, offset + count) of this tensor.
    T* Ptr(const char* api, int64_t offset, int64_t count, SrcLoc loc) const {
        return reinterpret_cast<T*>(BytePtr(api, offset * static_cast<int64_t>(sizeof(T)), count * static_cast<int64_t>(sizeof(T)), loc));
    }
    uint8_t* BytePtr(const char* api, int64_t boff, int64_t bcount, SrcLoc loc) const {
        Valid(api, loc);
        int64_t a = static_cast<int64_t>(addr_) + boff;
        if (bcount > 0 && (a < static_cast<int64_t>(begin_) || a + bcount > static_cast<int64_t>(end_)))
            ascx_emu::fail(api, loc,
                           "local tensor access out of its buffer: bytes [%lld, %lld) of %s, buffer is [%u, %u) (%u bytes) "
                           "at position %s",
                           (long long)a, (long long)(a + bcount), ascx_emu::scope_name(scope_), begin_, end_, end_ - begin_,
                           position_name(pos_));
        return ascx_emu::scope_mem(*core_, scope_, api, loc) + a;
    }
    void Valid(const char* api, SrcLoc loc) const {
        if (!core_) ascx_emu::fail(api, loc, "LocalTensor is uninitialised (not from AllocTensor / DeQue / TBuf::Get)");
        if (core_ != ascx_emu::cur_core()) ascx_emu::fail(api, loc, "LocalTensor belongs to another core");
        if (buf_ && buf_->gen != gen_)
            ascx_emu::fail(api, loc, "LocalTensor used after FreeTensor (buffer %d of its queue was released)", buf_->idx);
    }
    void CheckAlign(const char* api, uint32_t align, SrcLoc loc) const {
        if (addr_ % align != 0)
            ascx_emu::fail(api, loc, "misaligned local address: %s address %u is not %u-byte aligned", ascx_emu::scope_name(scope_),
                           addr_, align);
    }

    ascx_emu::CoreState* core_ = nullptr;
    ascx_emu::BufInfo* buf_ = nullptr;
    uint32_t gen_ = 0;
    TPosition pos_ = TPosition::VECCALC;
    int scope_ = ascx_emu::SC_UB;
    uint32_t addr_ = 0, begin_ = 0, end_ = 0, size_ = 0;
    int32_t tag_ = 0;
    ShapeInfo shape_{};
};

// ---------------------------------------------------------------- queues and buffers
class TPipe;
enum class HardEvent : uint8_t;
using TEventID = int8_t;
}  // namespace AscendC
namespace ascx_emu {
// The TPipe the running core made last (GetTPipePtr), by address (the pipe is a local of the
// kernel: kept as an integer, cleared by its destructor); each core runs in its own thread.
inline uintptr_t& current_pipe_addr() {
    static thread_local uintptr_t p = 0;
    return p;
}
inline AscendC::TPipe* current_pipe() { return reinterpret_cast<AscendC::TPipe*>(current_pipe_addr()); }
}  // namespace ascx_emu
namespace AscendC {

template <TPosition SRC, TPosition DST, int32_t DEPTH, auto... EXTRA> class TQueBind {
public:
    static constexpr TPosition pos = SRC;
    TQueBind() = default;

    template <typename T> LocalTensor<T> AllocTensor(ASCX_LOC) {
        auto& c = Core("TQue::AllocTensor", loc);
        Inited("TQue::AllocTensor", loc);
        // Buffers are handed out in ring order (as the device does), so consecutive
        // allocations alternate between the buffers of a double-buffered queue.
        for (size_t t = 0; t < bufs_.size(); ++t) {
            auto* b = bufs_[(cursor_ + t) % bufs_.size()];
            if (b->state == ascx_emu::BUF_FREE) {
                cursor_ = (cursor_ + t + 1) % bufs_.size();
                b->state = ascx_emu::BUF_ALLOCATED;
                ascx_emu::tm::wait_edge(c.tm, producer_pipe(SRC), b->free_tm, loc.file, loc.line);
                std::vector<std::string> e;
                if (!b->free_edge.empty()) e.push_back(b->free_edge);
                if (c.tracing) ascx_emu::trace_sync(c, producer_pipe(SRC), "AllocTensor", "wait", e, consumer_pipe(DST), producer_pipe(SRC), loc,
                                     ascx_emu::kv("que", id_) + ascx_emu::kv("buf", b->idx));
                return LocalTensor<T>(&c, b, SRC, b->addr, b->len);
            }
        }
        ascx_emu::fail("TQue::AllocTensor", loc,
                       "all %zu buffers of the %s queue are in use (allocated or enqueued and not freed); on the device "
                       "AllocTensor would wait forever",
                       bufs_.size(), position_name(SRC));
    }
    template <typename T> bool EnQue(const LocalTensor<T>& t, ASCX_LOC) {
        auto& c = Core("TQue::EnQue", loc);
        Inited("TQue::EnQue", loc);
        t.Valid("TQue::EnQue", loc);
        auto* b = Mine(t.buf(), "TQue::EnQue", loc);
        if (b->state != ascx_emu::BUF_ALLOCATED && b->state != ascx_emu::BUF_DEQUEUED)
            ascx_emu::fail("TQue::EnQue", loc, "buffer %d of the %s queue is not allocated (state %s)", b->idx, position_name(SRC), St(b->state));
        b->state = ascx_emu::BUF_ENQUEUED;
        b->enq_edge = c.name + "/q" + std::to_string(id_) + "/b" + std::to_string(b->idx) + "/enq" + std::to_string(enq_n_++);
        fifo_.push_back(b);
        ascx_emu::tm::set_edge(c.tm, producer_pipe(SRC), b->enq_tm);
        if (c.tracing) ascx_emu::trace_sync(c, producer_pipe(SRC), "EnQue", "set", {b->enq_edge}, producer_pipe(SRC), consumer_pipe(DST), loc,
                             ascx_emu::kv("que", id_) + ascx_emu::kv("buf", b->idx));
        return true;
    }
    template <typename T> LocalTensor<T> DeQue(ASCX_LOC) {
        auto& c = Core("TQue::DeQue", loc);
        Inited("TQue::DeQue", loc);
        if (fifo_.empty())
            ascx_emu::fail("TQue::DeQue", loc,
                           "DeQue on an empty %s queue (no EnQue pending); on the device this waits forever", position_name(SRC));
        auto* b = fifo_.front();
        fifo_.pop_front();
        b->state = ascx_emu::BUF_DEQUEUED;
        ascx_emu::tm::wait_edge(c.tm, consumer_pipe(DST), b->enq_tm, loc.file, loc.line);
        if (c.tracing) ascx_emu::trace_sync(c, consumer_pipe(DST), "DeQue", "wait", {b->enq_edge}, producer_pipe(SRC), consumer_pipe(DST), loc,
                             ascx_emu::kv("que", id_) + ascx_emu::kv("buf", b->idx));
        return LocalTensor<T>(&c, b, DST, b->addr, b->len);
    }
    template <typename T> void FreeTensor(LocalTensor<T>& t, ASCX_LOC) {
        auto& c = Core("TQue::FreeTensor", loc);
        t.Valid("TQue::FreeTensor", loc);
        auto* b = Mine(t.buf(), "TQue::FreeTensor", loc);
        if (b->state == ascx_emu::BUF_ENQUEUED)
            ascx_emu::fail("TQue::FreeTensor", loc, "buffer %d of the %s queue is freed while still enqueued (DeQue it first)", b->idx,
                           position_name(SRC));
        b->state = ascx_emu::BUF_FREE;
        b->gen++;
        b->free_edge = c.name + "/q" + std::to_string(id_) + "/b" + std::to_string(b->idx) + "/free" + std::to_string(free_n_++);
        ascx_emu::tm::set_edge(c.tm, consumer_pipe(DST), b->free_tm);
        if (c.tracing) ascx_emu::trace_sync(c, consumer_pipe(DST), "FreeTensor", "set", {b->free_edge}, consumer_pipe(DST), producer_pipe(SRC), loc,
                             ascx_emu::kv("que", id_) + ascx_emu::kv("buf", b->idx));
    }
    bool VacantInQue() const { return fifo_.size() < bufs_.size(); }
    bool HasTensorInQue() const { return !fifo_.empty(); }
    int32_t GetTensorCountInQue() const { return static_cast<int32_t>(fifo_.size()); }
    bool HasIdleBuffer() const {
        for (auto* b : bufs_) if (b->state == ascx_emu::BUF_FREE) return true;
        return false;
    }

    // internals
    std::vector<ascx_emu::BufInfo*> bufs_;
    std::deque<ascx_emu::BufInfo*> fifo_;
    ascx_emu::CoreState* core_ = nullptr;
    int id_ = -1;
    uint64_t enq_n_ = 0, free_n_ = 0;
    size_t cursor_ = 0;

private:
    ascx_emu::CoreState& Core(const char* api, SrcLoc loc) { return ascx_emu::core(api, loc); }
    void Inited(const char* api, SrcLoc loc) {
        if (bufs_.empty() || core_ != ascx_emu::cur_core()) ascx_emu::fail(api, loc, "queue used before TPipe::InitBuffer");
    }
    ascx_emu::BufInfo* Mine(ascx_emu::BufInfo* b, const char* api, SrcLoc loc) {
        if (!b || std::find(bufs_.begin(), bufs_.end(), b) == bufs_.end())
            ascx_emu::fail(api, loc, "tensor does not belong to this %s queue", position_name(SRC));
        return b;
    }
    static const char* St(int s) {
        static const char* n[] = {"free", "allocated", "enqueued", "dequeued", "tbuf"};
        return n[s];
    }
};

template <TPosition POS, int32_t DEPTH = 1, auto... EXTRA> using TQue = TQueBind<POS, POS, DEPTH, EXTRA...>;

template <TPosition POS = TPosition::VECCALC> class TBuf {
public:
    template <typename T> LocalTensor<T> Get(ASCX_LOC) {
        Inited("TBuf::Get", loc);
        return LocalTensor<T>(core_, b_, POS, b_->addr, b_->len);
    }
    template <typename T> LocalTensor<T> Get(uint32_t len, ASCX_LOC) {
        Inited("TBuf::Get", loc);
        if (len * sizeof(T) > b_->len)
            ascx_emu::fail("TBuf::Get", loc, "requested %u elements (%zu bytes) from a %u-byte TBuf", len, len * sizeof(T), b_->len);
        LocalTensor<T> t(core_, b_, POS, b_->addr, b_->len);
        t.size_ = len;
        return t;
    }
    template <typename T> LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset, ASCX_LOC) {
        Inited("TBuf::GetWithOffset", loc);
        if (bufOffset % 32 != 0) ascx_emu::fail("TBuf::GetWithOffset", loc, "bufOffset %u is not 32-byte aligned", bufOffset);
        if (bufOffset + size * sizeof(T) > b_->len)
            ascx_emu::fail("TBuf::GetWithOffset", loc, "offset %u + %zu bytes exceeds the %u-byte TBuf", bufOffset, size * sizeof(T), b_->len);
        LocalTensor<T> t(core_, b_, POS, b_->addr + bufOffset, b_->len);
        t.size_ = size;
        return t;
    }
    ascx_emu::BufInfo* b_ = nullptr;
    ascx_emu::CoreState* core_ = nullptr;

private:
    void Inited(const char* api, SrcLoc loc) {
        ascx_emu::core(api, loc);
        if (!b_ || core_ != ascx_emu::cur_core()) ascx_emu::fail(api, loc, "TBuf used before TPipe::InitBuffer");
    }
};

class TPipe {
public:
    TPipe() {
        c_ = ascx_emu::cur_core();
        ascx_emu::current_pipe_addr() = reinterpret_cast<uintptr_t>(this);
    }
    ~TPipe() {
        if (ascx_emu::current_pipe_addr() == reinterpret_cast<uintptr_t>(this)) ascx_emu::current_pipe_addr() = 0;
    }
    // event ids (defined in ops_more.h)
    template <HardEvent EVT> TEventID FetchEventID();
    TEventID FetchEventID(HardEvent evt);
    template <HardEvent EVT> TEventID AllocEventID();
    template <HardEvent EVT> void ReleaseEventID(TEventID id);

    template <TPosition SRC, TPosition DST, int32_t DEPTH, auto... EXTRA>
    bool InitBuffer(TQueBind<SRC, DST, DEPTH, EXTRA...>& que, uint8_t num, uint32_t len, ASCX_LOC) {
        return InitQue(que, num, len, "TPipe::InitBuffer", loc, nullptr);
    }
    template <TPosition POS> bool InitBuffer(TBuf<POS>& buf, uint32_t len, ASCX_LOC) {
        return InitTBuf(buf, len, "TPipe::InitBuffer", loc, nullptr);
    }
    // TBufPool (below): a pool takes `len` bytes of its position's memory from the pipe; with
    // shareBuf it lies over the same bytes as that pool instead (the two are used in turns).
    template <typename P> bool InitBufPool(P& pool, uint32_t len, ASCX_LOC) {
        pool.Make(*this, Reserve(P::kScope, P::kPos, len, "TPipe::InitBufPool", loc, nullptr), len);
        return true;
    }
    template <typename P, typename Q> bool InitBufPool(P& pool, uint32_t len, Q& shareBuf, ASCX_LOC) {
        pool.Share(*this, shareBuf.region_, len, "TPipe::InitBufPool", loc);
        return true;
    }
    void Reset() {
        for (auto& u : used_) u = 0;
        for (auto& q : que_bufs_) q = 0;
        nbufs_ = 0;
    }
    void Destroy() { Reset(); }
    void Init() {}
    // Bytes allocated so far in a physical scope (for tests and diagnostics).
    uint32_t Used(int scope) const { return used_[scope]; }

private:
    template <TPosition, uint32_t> friend class TBufPool;
    template <TPosition SRC, TPosition DST, int32_t DEPTH, auto... EXTRA>
    bool InitQue(TQueBind<SRC, DST, DEPTH, EXTRA...>& que, uint8_t num, uint32_t len, const char* api, SrcLoc loc, ascx_emu::PoolRegion* r) {
        auto& c = ascx_emu::core(api, loc);
        if (num == 0) ascx_emu::fail(api, loc, "buffer number 0 for a %s queue", position_name(SRC));
        if (!que.bufs_.empty() && que.core_ == &c) ascx_emu::fail(api, loc, "queue initialised twice");
        int pidx = static_cast<int>(SRC);
        que_bufs_[pidx] += num;
        if (que_bufs_[pidx] > ASCX_EMU_MAX_QUE_BUFFERS_PER_POSITION)
            ascx_emu::fail(api, loc,
                           "more than %d queue buffers on position %s (%d requested so far); the device hangs",
                           ASCX_EMU_MAX_QUE_BUFFERS_PER_POSITION, position_name(SRC), que_bufs_[pidx]);
        que.bufs_.clear();
        que.fifo_.clear();
        que.core_ = &c;
        que.cursor_ = 0;
        que.id_ = c.que_count++;
        for (int i = 0; i < num; ++i) {
            auto* b = Alloc(c, SRC, len, api, loc, r);
            b->que = que.id_;
            b->idx = i;
            que.bufs_.push_back(b);
        }
        return true;
    }
    template <TPosition POS> bool InitTBuf(TBuf<POS>& buf, uint32_t len, const char* api, SrcLoc loc, ascx_emu::PoolRegion* r) {
        auto& c = ascx_emu::core(api, loc);
        buf.b_ = Alloc(c, POS, len, api, loc, r);
        buf.b_->state = ascx_emu::BUF_TBUF;
        buf.core_ = &c;
        return true;
    }
    // The start of `len` bytes (rounded up to 32 B, aligned for the scope) of scope `sc`, taken
    // from the pipe's free memory or, given a pool region, from that pool's.
    uint32_t Reserve(int sc, TPosition pos, uint32_t len, const char* api, SrcLoc loc, ascx_emu::PoolRegion* r, bool a_buffer = true) {
        if (r && r->scope != sc)
            ascx_emu::fail(api, loc, "a buffer of position %s (%s) cannot come from a TBufPool in %s", position_name(pos),
                           ascx_emu::scope_name(sc), ascx_emu::scope_name(r->scope));
        if (r && a_buffer && ++r->bufs > r->max_bufs)
            ascx_emu::fail(api, loc, "more than %d buffers from one TBufPool (its bufIDSize)", r->max_bufs);
        uint32_t al = ascx_emu::scope_align(sc);
        uint32_t& cur = r ? r->cur : used_[sc];
        const uint32_t cap = r ? r->end : ascx_emu::scope_capacity(sc);
        uint32_t start = (cur + al - 1) / al * al;
        uint32_t rlen = (len + 31u) / 32u * 32u;
        uint64_t end = static_cast<uint64_t>(start) + rlen;
        if (end > cap) {
            if (r)
                ascx_emu::fail(api, loc, "TBufPool over-allocation: buffer of %u bytes (rounded to %u) at %s offset %u needs the pool "
                               "[%u, %u) to reach %llu", len, rlen, ascx_emu::scope_name(sc), start, r->base, r->end, (unsigned long long)end);
            ascx_emu::fail(api, loc,
                           "%s over-allocation: buffer of %u bytes (rounded to %u) at offset %u for position %s needs %llu bytes, "
                           "capacity is %u bytes",
                           ascx_emu::scope_name(sc), len, rlen, start, position_name(pos), (unsigned long long)end,
                           ascx_emu::scope_capacity(sc));
        }
        cur = static_cast<uint32_t>(end);
        return start;
    }
    ascx_emu::BufInfo* Alloc(ascx_emu::CoreState& c, TPosition pos, uint32_t len, const char* api, SrcLoc loc, ascx_emu::PoolRegion* r = nullptr) {
        int sc = position_scope(pos);
        if (sc < 0) ascx_emu::fail(api, loc, "position %s cannot hold a local buffer", position_name(pos));
        // The scope must exist on this core kind, except in a MIX launch: there both kinds run
        // the kernel's setup, and a buffer of the other kind's memory is address bookkeeping
        // only (the device's AIC reserves its UB queues too); touching it still fails.
        if (!c.mix) ascx_emu::scope_mem(c, sc, api, loc);
        if (++nbufs_ > ASCX_EMU_MAX_BUFFERS)
            ascx_emu::fail(api, loc, "more than %d buffers in one TPipe", ASCX_EMU_MAX_BUFFERS);
        const uint32_t start = Reserve(sc, pos, len, api, loc, r);
        c.bufs.emplace_back();
        auto* b = &c.bufs.back();
        b->scope = sc;
        b->addr = start;
        b->len = (len + 31u) / 32u * 32u;
        return b;
    }
    ascx_emu::CoreState* c_ = nullptr;
    uint32_t used_[ascx_emu::SC_NUM] = {};
    int que_bufs_[static_cast<int>(TPosition::MAX) + 1] = {};
    int nbufs_ = 0;
};

// ---------------------------------------------------------------- TBufPool
// A pool of local memory carved from the TPipe (TPipe::InitBufPool) from which queues, TBufs and
// smaller pools are then taken (InitBuffer / InitBufPool), up to bufIDSize buffers (at most 16).
// A pool made with shareBuf lies over another pool's bytes, so two phases of a kernel can each
// lay out the same memory. Reset() ends a phase: the pool's buffers stay allocated (their
// contents may be overwritten by the other pool), as its public page says; the emulator needs no
// action there, since the hazard check follows the addresses themselves.
template <TPosition pos, uint32_t bufIDSize = 4> class TBufPool {
public:
    static_assert(bufIDSize >= 1 && bufIDSize <= 16, "TBufPool: bufIDSize must be 1..16");
    static constexpr TPosition kPos = pos;
    static constexpr int kScope = position_scope(pos);
    static constexpr int kBufIDs = static_cast<int>(bufIDSize);
    static_assert(kScope == ascx_emu::SC_UB || kScope == ascx_emu::SC_L1, "TBufPool: position must be VECIN/VECOUT/VECCALC or A1/B1/C1");
    TBufPool() = default;

    template <TPosition SRC, TPosition DST, int32_t DEPTH, auto... EXTRA>
    bool InitBuffer(TQueBind<SRC, DST, DEPTH, EXTRA...>& que, uint8_t num, uint32_t len, ASCX_LOC) {
        return Pipe("TBufPool::InitBuffer", loc).InitQue(que, num, len, "TBufPool::InitBuffer", loc, &region_);
    }
    template <TPosition POS> bool InitBuffer(TBuf<POS>& buf, uint32_t len, ASCX_LOC) {
        return Pipe("TBufPool::InitBuffer", loc).InitTBuf(buf, len, "TBufPool::InitBuffer", loc, &region_);
    }
    // A sub-pool's bufIDSize may not exceed the buffers this pool has left (or, sharing, its own
    // bufIDSize), as the constructor's page says.
    template <typename P> bool InitBufPool(P& sub, uint32_t len, ASCX_LOC) {
        TPipe& p = Pipe("TBufPool::InitBufPool", loc);
        if (P::kBufIDs > region_.max_bufs - region_.bufs)
            ascx_emu::fail("TBufPool::InitBufPool", loc, "a sub-pool of bufIDSize %d from a pool with %d of its %d buffers left", P::kBufIDs,
                           region_.max_bufs - region_.bufs, region_.max_bufs);
        sub.Make(p, p.Reserve(P::kScope, P::kPos, len, "TBufPool::InitBufPool", loc, &region_, false), len);
        return true;
    }
    template <typename P, typename Q> bool InitBufPool(P& sub, uint32_t len, Q& shareBuf, ASCX_LOC) {
        if (P::kBufIDs > region_.max_bufs)
            ascx_emu::fail("TBufPool::InitBufPool", loc, "a shared sub-pool of bufIDSize %d from a pool of bufIDSize %d", P::kBufIDs,
                           region_.max_bufs);
        sub.Share(Pipe("TBufPool::InitBufPool", loc), shareBuf.region_, len, "TBufPool::InitBufPool", loc);
        return true;
    }
    void Reset() {}

    // ---- emulator internals
    void Make(TPipe& p, uint32_t start, uint32_t len) {
        pipe_ = &p;
        region_ = ascx_emu::PoolRegion{kScope, start, start + (len + 31u) / 32u * 32u, start, 0, static_cast<int>(bufIDSize)};
    }
    void Share(TPipe& p, const ascx_emu::PoolRegion& other, uint32_t len, const char* api, SrcLoc loc) {
        if (other.end == 0) ascx_emu::fail(api, loc, "shareBuf is a TBufPool that was never initialised");
        if (other.scope != kScope)
            ascx_emu::fail(api, loc, "shareBuf lies in %s, this pool's position %s is in %s", ascx_emu::scope_name(other.scope),
                           position_name(pos), ascx_emu::scope_name(kScope));
        const uint32_t rlen = (len + 31u) / 32u * 32u;
        if (rlen > other.end - other.base)
            ascx_emu::fail(api, loc, "a pool of %u bytes cannot share a pool of %u bytes", rlen, other.end - other.base);
        Make(p, other.base, len);
    }
    TPipe& Pipe(const char* api, SrcLoc loc) {
        if (!pipe_) ascx_emu::fail(api, loc, "TBufPool used before TPipe::InitBufPool");
        return *pipe_;
    }
    TPipe* pipe_ = nullptr;
    ascx_emu::PoolRegion region_{};
};

// ---------------------------------------------------------------- SetFlag / WaitFlag / barriers
enum class HardEvent : uint8_t {
    MTE2_MTE1, MTE1_MTE2, MTE1_M, M_MTE1, MTE2_V, V_MTE2, MTE3_V, V_MTE3, M_V, V_M, V_V, MTE3_MTE1, MTE1_MTE3, MTE1_V,
    MTE2_M, M_MTE2, V_MTE1, M_FIX, FIX_M, MTE3_MTE2, MTE2_MTE3, S_V, V_S, S_MTE2, MTE2_S, S_MTE3, MTE3_S, MTE2_FIX,
    FIX_MTE2, FIX_S, M_S, FIX_MTE3, MTE1_FIX, FIX_MTE1, FIX_FIX, MAX
};
inline void event_pipes(HardEvent e, int& src, int& dst, const char*& name) {
    struct R { int s, d; const char* n; };
    static const R t[] = {
        {PIPE_MTE2, PIPE_MTE1, "MTE2_MTE1"}, {PIPE_MTE1, PIPE_MTE2, "MTE1_MTE2"}, {PIPE_MTE1, PIPE_M, "MTE1_M"},
        {PIPE_M, PIPE_MTE1, "M_MTE1"}, {PIPE_MTE2, PIPE_V, "MTE2_V"}, {PIPE_V, PIPE_MTE2, "V_MTE2"},
        {PIPE_MTE3, PIPE_V, "MTE3_V"}, {PIPE_V, PIPE_MTE3, "V_MTE3"}, {PIPE_M, PIPE_V, "M_V"}, {PIPE_V, PIPE_M, "V_M"},
        {PIPE_V, PIPE_V, "V_V"}, {PIPE_MTE3, PIPE_MTE1, "MTE3_MTE1"}, {PIPE_MTE1, PIPE_MTE3, "MTE1_MTE3"},
        {PIPE_MTE1, PIPE_V, "MTE1_V"}, {PIPE_MTE2, PIPE_M, "MTE2_M"}, {PIPE_M, PIPE_MTE2, "M_MTE2"},
        {PIPE_V, PIPE_MTE1, "V_MTE1"}, {PIPE_M, PIPE_FIX, "M_FIX"}, {PIPE_FIX, PIPE_M, "FIX_M"},
        {PIPE_MTE3, PIPE_MTE2, "MTE3_MTE2"}, {PIPE_MTE2, PIPE_MTE3, "MTE2_MTE3"}, {PIPE_S, PIPE_V, "S_V"},
        {PIPE_V, PIPE_S, "V_S"}, {PIPE_S, PIPE_MTE2, "S_MTE2"}, {PIPE_MTE2, PIPE_S, "MTE2_S"}, {PIPE_S, PIPE_MTE3, "S_MTE3"},
        {PIPE_MTE3, PIPE_S, "MTE3_S"}, {PIPE_MTE2, PIPE_FIX, "MTE2_FIX"}, {PIPE_FIX, PIPE_MTE2, "FIX_MTE2"},
        {PIPE_FIX, PIPE_S, "FIX_S"}, {PIPE_M, PIPE_S, "M_S"}, {PIPE_FIX, PIPE_MTE3, "FIX_MTE3"},
        {PIPE_MTE1, PIPE_FIX, "MTE1_FIX"}, {PIPE_FIX, PIPE_MTE1, "FIX_MTE1"}, {PIPE_FIX, PIPE_FIX, "FIX_FIX"},
        {PIPE_S, PIPE_S, "MAX"}};
    const R& r = t[static_cast<int>(e)];
    src = r.s; dst = r.d; name = r.n;
}

// SetFlag / WaitFlag with the event known at run time (the set_flag / wait_flag intrinsics).
inline void set_flag_event(HardEvent EVT, int32_t eventID, SrcLoc loc) {
    auto& c = ascx_emu::core("SetFlag", loc);
    int s, d;
    const char* n;
    event_pipes(EVT, s, d, n);
    if (eventID < 0 || eventID > 7) ascx_emu::fail("SetFlag", loc, "event id %d out of range [0, 7] for HardEvent::%s", eventID, n);
    auto& f = c.flags[{static_cast<int>(EVT), eventID}];
    if (f.set)
        ascx_emu::fail("SetFlag", loc, "SetFlag<HardEvent::%s>(%d) set twice without a WaitFlag in between (first set at %s:%d)", n,
                       eventID, f.loc.file, f.loc.line);
    f.set = true;
    f.loc = loc;
    ascx_emu::tm::set_edge(c.tm, s, c.tm.flags[static_cast<size_t>(EVT) * 8 + static_cast<size_t>(eventID)]);
    if (!c.tracing) return;
    std::string edge = c.name + "/flag/" + n + "/" + std::to_string(eventID) + "/" + std::to_string(f.n);
    ascx_emu::trace_sync(c, s, "SetFlag", "set", {edge}, s, d, loc, ascx_emu::ks("event", n) + ascx_emu::kv("id", eventID));
}
inline void wait_flag_event(HardEvent EVT, int32_t eventID, SrcLoc loc) {
    auto& c = ascx_emu::core("WaitFlag", loc);
    int s, d;
    const char* n;
    event_pipes(EVT, s, d, n);
    if (eventID < 0 || eventID > 7) ascx_emu::fail("WaitFlag", loc, "event id %d out of range [0, 7] for HardEvent::%s", eventID, n);
    auto& f = c.flags[{static_cast<int>(EVT), eventID}];
    if (!f.set)
        ascx_emu::fail("WaitFlag", loc, "WaitFlag<HardEvent::%s>(%d) without a preceding SetFlag; on the device this waits forever", n,
                       eventID);
    uint64_t fn = f.n;
    f.set = false;
    f.n++;
    ascx_emu::tm::wait_edge(c.tm, d, c.tm.flags[static_cast<size_t>(EVT) * 8 + static_cast<size_t>(eventID)], loc.file, loc.line);
    if (!c.tracing) return;
    std::string edge = c.name + "/flag/" + n + "/" + std::to_string(eventID) + "/" + std::to_string(fn);
    ascx_emu::trace_sync(c, d, "WaitFlag", "wait", {edge}, s, d, loc, ascx_emu::ks("event", n) + ascx_emu::kv("id", eventID));
}
template <HardEvent EVT> inline void SetFlag(int32_t eventID, ASCX_LOC) { set_flag_event(EVT, eventID, loc); }
template <HardEvent EVT> inline void WaitFlag(int32_t eventID, ASCX_LOC) { wait_flag_event(EVT, eventID, loc); }
template <pipe_t P> inline void PipeBarrier(ASCX_LOC) {
    auto& c = ascx_emu::core("PipeBarrier", loc);
    if (P == PIPE_ALL) ascx_emu::tm::barrier_all(c.tm);
    else ascx_emu::tm::sync_issue(c.tm);
    ascx_emu::trace_sync(c, P, "PipeBarrier", "barrier", {}, -1, -1, loc);
}


// ---------------------------------------------------------------- cross-core flags
// mode 0: all cores of the same kind synchronise (barrier); mode 1: the two AIVs of a
// group synchronise (barrier); mode 2: AIC <-> AIV of one group (AIC set wakes both
// AIVs; an AIC wait consumes one set from each of its two AIVs).
inline void cross_wait_until(ascx_emu::CrossCore& x, std::unique_lock<std::mutex>& lk, const std::function<bool()>& ready,
                             const std::function<std::string()>& what, SrcLoc loc, const char* api = "CrossCoreWaitFlag") {
    if (ready()) return;
    x.blocked++;
    auto t0 = std::chrono::steady_clock::now();  // the last time this core saw another core progress
    uint64_t steps = ascx_emu::work_steps().load(std::memory_order_relaxed), seen_progress = x.progress;
    while (!ready()) {
        if (x.blocked >= x.live) {
            // Every live core is in a wait, but a core just released by a set may not have
            // woken up yet: it is a deadlock only if nothing progresses for a second (a loaded
            // machine may not schedule the released thread at once).
            uint64_t seen = x.progress;
            x.cv.wait_for(lk, std::chrono::milliseconds(1000), [&] { return ready() || x.progress != seen; });
            if (!ready() && x.blocked >= x.live && x.progress == seen)
                ascx_emu::fail(api, loc, "deadlock: every running core is blocked; this core waits for %s", what().c_str());
            continue;
        }
        x.cv.wait_for(lk, std::chrono::milliseconds(50));
        uint64_t now_steps = ascx_emu::work_steps().load(std::memory_order_relaxed);
        if (now_steps != steps || x.progress != seen_progress) {  // some core is still working: not a hang
            steps = now_steps;
            seen_progress = x.progress;
            t0 = std::chrono::steady_clock::now();
            continue;
        }
        double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (el > x.timeout_s && !ready())
            ascx_emu::fail(api, loc, "timeout: no core made progress for %.1f s while this core waits for %s "
                           "(ASCX_EMU_DEADLOCK_TIMEOUT)", el, what().c_str());
    }
    x.blocked--;
}

template <uint8_t MODE, pipe_t P> inline void CrossCoreSetFlag(uint16_t flagId, ASCX_LOC) {
    auto& c = ascx_emu::core("CrossCoreSetFlag", loc);
    auto* x = ascx_emu::cross();
    if (flagId > 15) ascx_emu::fail("CrossCoreSetFlag", loc, "flag id %u out of range [0, 15]", flagId);
    if (MODE > 2) ascx_emu::fail("CrossCoreSetFlag", loc, "mode %u out of range [0, 2]", MODE);
    std::unique_lock<std::mutex> lk(x->mu);
    std::vector<std::string> edges;
    c.cc_last_mode[flagId] = MODE;
    uint64_t k = c.cc_set_count[flagId]++;
    if (MODE == 2) {
        if (!c.mix) ascx_emu::fail("CrossCoreSetFlag", loc, "mode 2 (AIC<->AIV) needs KernelMode::MIX_MODE");
        auto target = [&](const std::string& who, int slot) {
            auto& v = x->recv[who];
            auto& ve = x->recv_edges[who];
            if (v.size() < 32) { v.assign(32, 0); ve.assign(32, {}); }
            uint64_t& cnt = v[flagId * 2 + slot];
            if (cnt >= 15) ascx_emu::fail("CrossCoreSetFlag", loc, "cross-core flag %u counter overflow on %s (more than 15 pending sets)", flagId, who.c_str());
            cnt++;
            std::string e = "xc/" + c.name + "->" + who + "/f" + std::to_string(flagId) + "/" + std::to_string(k);
            ve[flagId * 2 + slot].push_back(e);
            ascx_emu::tm::set_edge(c.tm, P, x->xedge[e], true);
            edges.push_back(e);
        };
        std::string g = "b" + std::to_string(c.group);
        if (c.kind == ascx_emu::CoreKind::AIC) { target(g + ".aiv0", 0); target(g + ".aiv1", 0); }
        else target(g + ".aic0", c.sub);
    } else {
        std::string key = MODE == 0 ? std::string("m0/") + (c.kind == ascx_emu::CoreKind::AIV ? "AIV" : "AIC")
                                    : "m1/b" + std::to_string(c.group);
        auto& v = x->bar[key];
        auto& ve = x->bar_edges[key];
        if (v.empty()) { v.assign(16, 0); ve.assign(16, {}); }
        v[flagId]++;
        std::string e = "xc/" + key + "/" + c.name + "/f" + std::to_string(flagId) + "/" + std::to_string(k);
        ve[flagId].push_back(e);
        ascx_emu::tm::set_edge(c.tm, P, x->xedge[e], true);
        edges.push_back(e);
    }
    x->progress++;
    x->cv.notify_all();
    lk.unlock();
    ascx_emu::trace_sync(c, P, "CrossCoreSetFlag", "set", edges, P, -1, loc, ascx_emu::kv("mode", MODE) + ascx_emu::kv("flag", flagId));
}

template <uint8_t MODE = 0, pipe_t P = PIPE_S> inline void CrossCoreWaitFlag(uint16_t flagId, ASCX_LOC) {
    auto& c = ascx_emu::core("CrossCoreWaitFlag", loc);
    auto* x = ascx_emu::cross();
    if (flagId > 15) ascx_emu::fail("CrossCoreWaitFlag", loc, "flag id %u out of range [0, 15]", flagId);
    std::unique_lock<std::mutex> lk(x->mu);
    std::vector<std::string> edges;
    int mode = c.cc_last_mode[flagId];
    char what[160];
    if (mode == 0 || mode == 1) {
        std::string key = mode == 0 ? std::string("m0/") + (c.kind == ascx_emu::CoreKind::AIV ? "AIV" : "AIC")
                                    : "m1/b" + std::to_string(c.group);
        uint64_t n = mode == 0 ? static_cast<uint64_t>(c.kind == ascx_emu::CoreKind::AIV ? x->n_aiv : x->n_aic) : 2;
        const auto& cfg = ascx_emu::tm::config();
        if (mode == 0 && cfg.timing && c.block_num > cfg.aic_cores)  // the target's core counts are known
            ascx_emu::fail("CrossCoreWaitFlag", loc, "a mode-0 barrier waits for all %d blocks of the launch, but the "
                           "chip runs %d at once: later blocks start only when earlier ones end (waves), so this "
                           "barrier never completes on the chip; launch at most %d blocks", c.block_num,
                           cfg.aic_cores, cfg.aic_cores);
        uint64_t k = ++c.cc_wait_count[flagId];
        std::snprintf(what, sizeof what, "cross-core flag %u (mode %d barrier, %llu sets needed)", flagId, mode, (unsigned long long)(k * n));
        auto& v = x->bar[key];
        if (v.empty()) { v.assign(16, 0); x->bar_edges[key].assign(16, {}); }
        cross_wait_until(*x, lk, [&] { return x->bar[key][flagId] >= k * n; }, [&] { return std::string(what); }, loc);
        auto& ve = x->bar_edges[key][flagId];
        for (uint64_t i = (k - 1) * n; i < k * n && i < ve.size(); ++i) edges.push_back(ve[i]);
    } else {
        auto& v = x->recv[c.name];
        if (v.size() < 32) { v.assign(32, 0); x->recv_edges[c.name].assign(32, {}); }
        bool aic = c.kind == ascx_emu::CoreKind::AIC;
        std::snprintf(what, sizeof what, "cross-core flag %u (mode 2, from %s)", flagId, aic ? "both AIVs of the group" : "the AIC of the group");
        auto ready = [&] {
            auto& vv = x->recv[c.name];
            return aic ? (vv[flagId * 2] > 0 && vv[flagId * 2 + 1] > 0) : vv[flagId * 2] > 0;
        };
        cross_wait_until(*x, lk, ready, [&] { return std::string(what); }, loc);
        for (int s = 0; s < (aic ? 2 : 1); ++s) {
            x->recv[c.name][flagId * 2 + s]--;
            auto& ve = x->recv_edges[c.name][flagId * 2 + s];
            edges.push_back(ve.front());
            ve.erase(ve.begin());
        }
    }
    // The edges are applied in a canonical order (by the time each set fired, then by edge
    // id), not in the order the core threads happened to arrive: each costs an issue slot,
    // so arrival order would make the same binary's cycles vary from run to run.
    std::vector<std::pair<const ascx_emu::tm::Edge*, const std::string*>> fired;
    for (auto& e : edges) {
        auto it = x->xedge.find(e);
        if (it != x->xedge.end()) fired.emplace_back(&it->second, &e);
    }
    std::sort(fired.begin(), fired.end(), [](const auto& a, const auto& b) {
        return a.first->t != b.first->t ? a.first->t < b.first->t : *a.second < *b.second;
    });
    for (auto& f : fired) ascx_emu::tm::wait_edge(c.tm, P, *f.first, loc.file, loc.line);
    lk.unlock();
    ascx_emu::trace_sync(c, P, "CrossCoreWaitFlag", "wait", edges, -1, P, loc, ascx_emu::kv("flag", flagId));
}

// ---------------------------------------------------------------- vector mask state
template <typename T, int MODE = 0> inline void SetVectorMask(uint64_t maskHigh, uint64_t maskLow) {
    auto* c = ascx_emu::cur_core();
    if (c) { c->mask_hi = maskHigh; c->mask_lo = maskLow; }
}
template <typename T, int MODE = 0> inline void SetVectorMask(int32_t len) {
    auto* c = ascx_emu::cur_core();
    if (!c) return;
    uint64_t n = static_cast<uint64_t>(len < 0 ? 0 : len);
    c->mask_lo = n >= 64 ? ~0ull : ((1ull << n) - 1);
    c->mask_hi = n >= 128 ? ~0ull : (n <= 64 ? 0 : ((1ull << (n - 64)) - 1));
}
inline void ResetMask() {
    auto* c = ascx_emu::cur_core();
    if (c) { c->mask_hi = ~0ull; c->mask_lo = ~0ull; }
}
template <typename T> inline void SetAtomicAdd() { if (auto* c = ascx_emu::cur_core()) c->atomic_add = true; }
inline void SetAtomicNone() { if (auto* c = ascx_emu::cur_core()) c->atomic_add = false; }
// InitSocState: the static-tensor kernel entry's reset of the core's global state (its page
// names the atomic-accumulation state and the mask mode): atomic off, the full vector mask.
inline void InitSocState() {
    SetAtomicNone();
    ResetMask();
}

}  // namespace AscendC

namespace ascx_emu {
inline void check_kernel_end(CoreState& c, SrcLoc loc) {
    for (auto& kvp : c.flags) {
        if (kvp.second.set) {
            int s, d;
            const char* n;
            AscendC::event_pipes(static_cast<AscendC::HardEvent>(kvp.first.first), s, d, n);
            fail("kernel end", loc, "unbalanced flags: SetFlag<HardEvent::%s>(%d) at %s:%d was never waited", n, kvp.first.second,
                 kvp.second.loc.file, kvp.second.loc.line);
        }
    }
}
}  // namespace ascx_emu

// Core-kind macros: `if ASCEND_IS_AIV { ... }`.
#define g_coreType (::AscendC::GetCoreKind())
#define ASCEND_IS_AIV (::AscendC::GetCoreKind() == ::AscendC::AIV)
#define ASCEND_IS_AIC (::AscendC::GetCoreKind() == ::AscendC::AIC)
#define ASCEND_IS_NOT_AIV (::AscendC::GetCoreKind() != ::AscendC::AIV)
#define ASCEND_IS_NOT_AIC (::AscendC::GetCoreKind() != ::AscendC::AIC)

// Legacy intrinsic spellings.
inline void pipe_barrier(pipe_t p, ASCX_LOC) {
    auto& c = ascx_emu::core("pipe_barrier", loc);
    if (p == PIPE_ALL) ascx_emu::tm::barrier_all(c.tm);
    else ascx_emu::tm::sync_issue(c.tm);
    ascx_emu::trace_sync(c, p, "PipeBarrier", "barrier", {}, -1, -1, loc);
}
inline int64_t get_block_idx() { return AscendC::GetBlockIdx(); }
inline int64_t get_block_num() { return AscendC::GetBlockNum(); }
inline int64_t get_subblockid() { return AscendC::GetSubBlockIdx(); }

// ---------------------------------------------------------------- CPU-debug harness names
namespace AscendC {
// GM is reserved, not committed: an anonymous private mapping with MAP_NORESERVE is
// zero-filled by the kernel page by page on first touch, so a timing-only profile (which
// moves no data) of a kernel with 50 GB of tensors commits only the pages its scalar code
// reads. A reservation the host refuses (address-space limit, strict overcommit) stops the
// run with its own status, ASCX_EMU_RESOURCE_EXIT: a limit of this machine, not a bug.
inline size_t gm_mapped_bytes(size_t size) {
    size_t n = size == 0 ? 32 : (size + 31) / 32 * 32;
    return (n + 63) / 64 * 64;
}
inline uint8_t* GmAlloc(size_t size) {
    const size_t n = gm_mapped_bytes(size);
    void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        std::fprintf(stderr,
                     "ascx-emu: error: GmAlloc: cannot reserve %zu bytes (%.1f GiB) of host memory for a GM tensor: %s\n"
                     "  hint: the host refused the reservation (an address-space limit such as `ulimit -v`, or strict "
                     "overcommit); raise the limit or use smaller sizes\n",
                     size, static_cast<double>(size) / (1024.0 * 1024.0 * 1024.0), std::strerror(errno));
        std::_Exit(ASCX_EMU_RESOURCE_EXIT);
    }
    auto& r = ascx_emu::gm_registry();
    std::lock_guard<std::mutex> g(r.mu);
    r.regions[reinterpret_cast<uintptr_t>(p)] = size;
    return static_cast<uint8_t*>(p);
}
inline void GmFree(void* p) {
    if (!p) return;
    size_t size = 0;
    {
        auto& r = ascx_emu::gm_registry();
        std::lock_guard<std::mutex> g(r.mu);
        auto it = r.regions.find(reinterpret_cast<uintptr_t>(p));
        if (it == r.regions.end()) {
            std::fprintf(stderr, "ascx-emu: error: GmFree: %p was not returned by GmAlloc (or was freed twice)\n", p);
            std::_Exit(ASCX_EMU_ERROR_EXIT);
        }
        size = it->second;
        r.regions.erase(it);
    }
    munmap(p, gm_mapped_bytes(size));
}
}  // namespace AscendC
using AscendC::GmAlloc;
using AscendC::GmFree;

#define ICPU_RUN_KF(func, blockDim, ...) \
    ::ascx_emu::launch(#func, static_cast<uint32_t>(blockDim), [&]() { func(__VA_ARGS__); }, ::ascx_emu::SrcLoc{__FILE__, __LINE__})
#define ICPU_SET_TILING_KEY(key) (::ascx_emu::tiling_key() = static_cast<uint64_t>(key))
#define KERNEL_TASK_TYPE_DEFAULT(t) ((void)0)
