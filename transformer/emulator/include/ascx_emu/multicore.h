// ascx emulator: block scheduling of one launch and the all-core barrier SyncAll.
// Clean-room implementation written for the ascx project from the public Ascend C API
// documentation of SyncAll (hardware form SyncAll<isAIVOnly>() and software form
// SyncAll(gmWorkspace, ubWorkspace, usedCores)). Apache-2.0.
//
// AIV-only / AIC-only launches run their blocks one at a time in block order (deterministic,
// as before), but each block runs in its own thread: a block reaching SyncAll hands the turn
// to the next block, and when the last participant arrives all of them continue in block
// order. A kernel without SyncAll therefore executes exactly as a sequential loop over the
// blocks. When no block can run but some wait in SyncAll, the barrier can never complete
// (a participant ended, or waits at a different SyncAll): that is reported as a deadlock
// naming the blocks. Mix-mode launches already run every core concurrently; there SyncAll
// is a barrier on the shared cross-core state with the same deadlock detection as
// CrossCoreWaitFlag.
#pragma once
#include "ops.h"

namespace ascx_emu {

struct Turns {
    enum St { NOT_STARTED, READY, RUNNING, AT_BARRIER, DONE };
    std::mutex mu;
    std::condition_variable cv;
    std::vector<int> st;
    std::vector<SrcLoc> at;          // where each waiting block called SyncAll
    std::vector<uint64_t> passes;    // SyncAll calls completed per block
    int arrived = 0, participants = 0;
};
inline Turns*& turns() {
    static Turns* t = nullptr;
    return t;
}

// Mix-mode barrier state (guarded by the launch's CrossCore mutex).
struct MixBarrier {
    std::map<std::string, uint64_t> arrivals;  // core name -> SyncAll calls made
    std::map<uint64_t, int> count;             // barrier number -> cores arrived
};
inline MixBarrier& mix_barrier() {
    static MixBarrier b;  // keyed by launch number, so launches do not mix
    return b;
}

inline std::string block_list(const std::vector<int>& blocks) {
    std::string s = blocks.size() == 1 ? "block " : "blocks ";
    for (size_t i = 0; i < blocks.size(); ++i) s += (i ? ", " : "") + std::to_string(blocks[i]);
    return s;
}

inline void run_blocks_in_turn(std::vector<std::unique_ptr<CoreState>>& cores, const std::function<void()>& body, SrcLoc loc) {
    Turns t;
    const size_t n = cores.size();
    t.st.assign(n, Turns::NOT_STARTED);
    t.at.assign(n, SrcLoc{nullptr, 0});
    t.passes.assign(n, 0);
    turns() = &t;
    std::vector<std::thread> th(n);
    std::unique_lock<std::mutex> lk(t.mu);
    for (;;) {
        size_t pick = n;
        for (size_t i = 0; i < n && pick == n; ++i)
            if (t.st[i] == Turns::READY || t.st[i] == Turns::NOT_STARTED) pick = i;
        if (pick == n) {
            std::vector<int> waiting, ended;
            for (size_t i = 0; i < n; ++i) (t.st[i] == Turns::AT_BARRIER ? waiting : ended).push_back(static_cast<int>(i));
            if (waiting.empty()) break;
            size_t w = static_cast<size_t>(waiting[0]);
            cur_core() = cores[w].get();
            fail("SyncAll", t.at[w],
                 "deadlock: %s %s in SyncAll #%llu (%d of %d participants arrived) but %s ended or %s elsewhere without "
                 "reaching it; on the device this hangs",
                 block_list(waiting).c_str(), waiting.size() == 1 ? "waits" : "wait", static_cast<unsigned long long>(t.passes[w] + 1),
                 t.arrived, t.participants, block_list(ended).c_str(), ended.size() == 1 ? "waits" : "wait");
        }
        if (t.st[pick] == Turns::NOT_STARTED) {
            t.st[pick] = Turns::RUNNING;
            CoreState* cp = cores[pick].get();
            th[pick] = std::thread([cp, pick, &t, &body, loc] {
                run_one(*cp, body, loc);
                std::lock_guard<std::mutex> g(t.mu);
                t.st[pick] = Turns::DONE;
                t.cv.notify_all();
            });
        } else {
            t.st[pick] = Turns::RUNNING;
            t.cv.notify_all();
        }
        t.cv.wait(lk, [&] { return t.st[pick] != Turns::RUNNING; });
        if (t.st[pick] == Turns::DONE) {
            lk.unlock();
            th[pick].join();
            lk.lock();
        }
    }
    turns() = nullptr;
}

// Barrier among the blocks of a sequential (AIV-only or AIC-only) launch.
inline void turn_barrier(CoreState& c, int participants, SrcLoc loc) {
    Turns& t = *turns();
    std::unique_lock<std::mutex> lk(t.mu);
    size_t me = static_cast<size_t>(c.block);
    if (t.arrived > 0 && t.participants != participants)
        fail("SyncAll", loc, "blocks disagree on the number of participants (%d here, %d at the blocks already waiting)", participants,
             t.participants);
    t.participants = participants;
    t.st[me] = Turns::AT_BARRIER;
    t.at[me] = loc;
    if (++t.arrived == participants) {
        for (size_t i = 0; i < t.st.size(); ++i)
            if (t.st[i] == Turns::AT_BARRIER) { t.st[i] = Turns::READY; t.passes[i]++; }
        t.arrived = 0;
    }
    t.cv.notify_all();
    t.cv.wait(lk, [&] { return t.st[me] == Turns::RUNNING; });
}

// Barrier among the cores of a mix-mode launch (`aiv_only`: the AIV cores; else all cores).
inline void mix_sync(CoreState& c, bool aiv_only, SrcLoc loc) {
    CrossCore* x = cross();
    std::unique_lock<std::mutex> lk(x->mu);
    MixBarrier* mb = &mix_barrier();
    std::string key = std::to_string(c.run) + "/" + c.name;
    uint64_t k = ++mb->arrivals[key];
    uint64_t slot = (static_cast<uint64_t>(c.run) << 32) | k;
    int need = aiv_only ? x->n_aiv : x->n_aiv + x->n_aic;
    mb->count[slot]++;
    x->progress++;
    x->cv.notify_all();
    auto what = [&] {
        std::string missing;
        for (int b = 0; b < c.block_num; ++b) {
            const char* kinds[3] = {"aic0", "aiv0", "aiv1"};
            for (int i = aiv_only ? 1 : 0; i < 3; ++i) {
                std::string nm = "b" + std::to_string(b) + "." + kinds[i];
                auto it = mb->arrivals.find(std::to_string(c.run) + "/" + nm);
                if (it == mb->arrivals.end() || it->second < k) missing += (missing.empty() ? "" : ", ") + nm;
            }
        }
        return "SyncAll #" + std::to_string(k) + " (" + std::to_string(mb->count[slot]) + " of " + std::to_string(need) +
               " cores arrived; missing " + missing + ")";
    };
    AscendC::cross_wait_until(*x, lk, [&] { return mb->count[slot] >= need; }, what, loc, "SyncAll");
}

}  // namespace ascx_emu

namespace AscendC {

namespace detail {
inline void sync_all(bool aiv_only, int used_cores, SrcLoc loc) {
    auto& c = ascx_emu::core("SyncAll", loc);
    if (c.mix) {
        if (aiv_only && c.kind != ascx_emu::CoreKind::AIV)
            ascx_emu::fail("SyncAll", loc, "SyncAll<isAIVOnly = true> called on an AIC core; a mix kernel synchronising cube and "
                           "vector cores needs SyncAll<false>()");
        ascx_emu::mix_sync(c, aiv_only, loc);
    } else {
        int n = used_cores > 0 ? used_cores : c.block_num;
        if (used_cores > c.block_num)
            ascx_emu::fail("SyncAll", loc, "usedCores %d exceeds the launch's blockDim %d", used_cores, c.block_num);
        if (c.block >= n)
            ascx_emu::fail("SyncAll", loc, "block %d takes part in a SyncAll of usedCores = %d (blocks 0..%d)", c.block, n, n - 1);
        ascx_emu::turn_barrier(c, n, loc);
    }
    // Our reading: the all-core barrier also completes every pipe of the calling core (as
    // PipeBarrier<PIPE_ALL>), so the timing model and hazard detector see it as one.
    ascx_emu::tm::barrier_all(c.tm);
    ascx_emu::trace_sync(c, PIPE_ALL, "SyncAll", "barrier", {}, -1, -1, loc, ascx_emu::kv("cores", used_cores > 0 ? used_cores : c.block_num));
}
}  // namespace detail

// Hardware form: all AIV cores of the launch (isAIVOnly, the default) or, in a mix kernel,
// all cube and vector cores (isAIVOnly = false) wait until every one of them has arrived.
template <bool isAIVOnly = true> inline void SyncAll(ASCX_LOC) { detail::sync_all(isAIVOnly, 0, loc); }

// Software form: the same barrier among the first usedCores blocks (0: all), with the
// documented workspace rules checked: gmWorkspace and ubWorkspace hold at least 32 bytes
// per core, ubWorkspace lies in UB. (The emulator keeps its own barrier state; the GM flags
// the device writes are not modelled.)
template <bool isAIVOnly = true>
inline void SyncAll(const GlobalTensor<int32_t>& gmWorkspace, const LocalTensor<int32_t>& ubWorkspace, const int32_t usedCores = 0, ASCX_LOC) {
    static_assert(isAIVOnly, "SyncAll: the software form (gmWorkspace, ubWorkspace) supports only isAIVOnly = true");
    auto& c = ascx_emu::core("SyncAll", loc);
    int n = usedCores > 0 ? usedCores : c.block_num;
    uint64_t need = static_cast<uint64_t>(n) * 32;
    if (gmWorkspace.GetSize() != 0 && gmWorkspace.GetSize() * 4 < need)
        ascx_emu::fail("SyncAll", loc, "gmWorkspace holds %llu bytes; the software SyncAll of %d cores needs at least %llu (32 B per core)",
                       static_cast<unsigned long long>(gmWorkspace.GetSize() * 4), n, static_cast<unsigned long long>(need));
    gmWorkspace.Check("SyncAll", 0, need / 4, loc);
    ascx_emu::local_check_vec("SyncAll", ubWorkspace, loc);
    if (static_cast<uint64_t>(ubWorkspace.GetSize()) * 4 < need)
        ascx_emu::fail("SyncAll", loc, "ubWorkspace holds %u bytes; the software SyncAll of %d cores needs at least %llu (32 B per core)",
                       ubWorkspace.GetSize() * 4, n, static_cast<unsigned long long>(need));
    detail::sync_all(true, usedCores, loc);
}

}  // namespace AscendC
