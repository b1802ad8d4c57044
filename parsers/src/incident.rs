//! Lines that say something went wrong, whatever engine printed them: crashes, CUDA
//! out-of-memory, NCCL and distributed errors, failed health checks, KV-transfer failures,
//! aborted requests, recompilations, and the tracebacks around them.
//!
//! Much of this text comes from the libraries under the engines (PyTorch, NCCL, uvicorn,
//! Python itself) and reads the same in SGLang and vLLM logs, with or without their prefix,
//! so it is matched by phrases anywhere in the message: one multi-phrase search per line that
//! no engine parser took (stats lines and access lines never get here). The phrases are those
//! the libraries and engines print; where a phrase belongs to one engine version range it
//! says so. `fixtures/formats/check_sources.py` lists, for each phrase, the SGLang (0.4.0,
//! 0.4.6, 0.5.3, 0.5.9, 0.5.23) and vLLM (0.6.3, 0.8.5, 0.10.1, 0.33.0) releases on PyPI whose
//! source holds it: every engine phrase is held by at least one; the watchdog, `DistBackendError`,
//! `NCCL Error` and `Recompiling function` phrases are PyTorch's and NCCL's own.

use crate::record::EventKind;
use aho_corasick::{AhoCorasick, MatchKind};
use std::sync::LazyLock;

/// The phrases, each with the kind it says; the first (leftmost, then listed first) wins,
/// so the more specific phrases come first.
const PHRASES: &[(&str, EventKind)] = &[
    // PyTorch's allocator: `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate
    // 2.00 GiB. GPU 0 has a total capacity of …` (`torch.cuda.OutOfMemoryError` before 2.5),
    // and the CUDA runtime's own error text
    ("CUDA out of memory", EventKind::CudaOom),
    ("OutOfMemoryError", EventKind::CudaOom),
    ("CUDA error: out of memory", EventKind::CudaOom),
    // PyTorch's NCCL process group: `[rank3]:[E1201 10:02:11.123 ProcessGroupNCCL.cpp:616]
    // [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=…,
    // OpType=ALLREDUCE, …) ran for 600000 milliseconds before timing out.`, the watchdog's
    // heartbeat monitor, and NCCL's error names in `DistBackendError` / `RuntimeError` texts
    (
        "Watchdog caught collective operation timeout",
        EventKind::Distributed,
    ),
    ("ProcessGroupNCCL's watchdog", EventKind::Distributed),
    (
        "Some NCCL operations have failed or timed out",
        EventKind::Distributed,
    ),
    ("DistBackendError", EventKind::Distributed),
    ("DistNetworkError", EventKind::Distributed),
    ("NCCL error", EventKind::Distributed),
    ("NCCL Error", EventKind::Distributed),
    ("ncclUnhandledCudaError", EventKind::Distributed),
    ("ncclSystemError", EventKind::Distributed),
    ("ncclInternalError", EventKind::Distributed),
    ("ncclRemoteError", EventKind::Distributed),
    // SGLang's processes (`Scheduler hit an exception: …` and its siblings, the launcher's
    // `Received sigquit from a child process. It usually means the child failed.`); vLLM
    // V1's engine core (`EngineCore encountered a fatal error.`, `EngineDeadError`, `Engine
    // core initialization failed`) and V0's (`AsyncLLMEngine has failed, terminating server
    // process`, `Engine background task failed`, `MQLLMEngine terminated`); the Python
    // runtime's own last words
    ("hit an exception", EventKind::Crash),
    ("Received sigquit from a child process", EventKind::Crash),
    ("Child process unexpectedly failed", EventKind::Crash),
    ("EngineDeadError", EventKind::Crash),
    ("EngineCore encountered a fatal error", EventKind::Crash),
    ("EngineCore failed to start", EventKind::Crash),
    ("Engine core initialization failed", EventKind::Crash),
    ("AsyncLLMEngine has failed", EventKind::Crash),
    ("Engine background task failed", EventKind::Crash),
    ("MQLLMEngine terminated", EventKind::Crash),
    ("Engine process failed to start", EventKind::Crash),
    ("Fatal Python error", EventKind::Crash),
    ("Segmentation fault", EventKind::Crash),
    ("watchdog timeout", EventKind::Crash),
    // SGLang's `/health_generate`: `Health check failed. Server couldn't get a response from
    // detokenizer for last 20 seconds.`
    ("Health check failed", EventKind::HealthCheck),
    ("health check failed", EventKind::HealthCheck),
    // SGLang's disaggregation: `KVTransferError(bootstrap_room=…)`, requests timed out in a
    // `KVPoll` state, failed bootstraps and transfers
    ("KVTransferError", EventKind::KvTransfer),
    ("KVPoll.", EventKind::KvTransfer),
    ("bootstrap failed", EventKind::KvTransfer),
    ("Bootstrap failed", EventKind::KvTransfer),
    ("KV transfer failed", EventKind::KvTransfer),
    // vLLM `Aborted request %s.` (request logging on), SGLang `Abort request …`, and clients
    // gone while a response streamed
    ("Aborted request", EventKind::Abort),
    ("Abort request", EventKind::Abort),
    ("Client disconnected", EventKind::Abort),
    ("client disconnected", EventKind::Abort),
    // torch._dynamo: `Recompiling function forward in …`, and its limit
    // (`torch._dynamo hit config.recompile_limit (8)`, `cache_size_limit` before 2.6)
    ("Recompiling function", EventKind::Recompile),
    ("recompile_limit", EventKind::Recompile),
    ("cache_size_limit", EventKind::Recompile),
    ("Traceback (most recent call last)", EventKind::Traceback),
];

static FINDER: LazyLock<Option<AhoCorasick>> = LazyLock::new(|| {
    AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostFirst)
        .build(PHRASES.iter().map(|p| p.0))
        .ok()
});

/// The kind of incident a message reports, if any.
pub fn classify(msg: &str) -> Option<EventKind> {
    if let Some(m) = FINDER.as_ref().and_then(|f| f.find(msg)) {
        return Some(PHRASES[m.pattern().as_usize()].1);
    }
    exception(msg).then_some(EventKind::Exception)
}

/// Whether `msg` is a traceback's last line: `Name: message` at its start, the name a
/// dotted Python identifier ending in `Error`, `Exception`, `Exit` or `Interrupt`
/// (`RuntimeError: …`, `torch.distributed.DistStoreError: …`, `KeyboardInterrupt`).
fn exception(msg: &str) -> bool {
    let name = match msg.find(':') {
        Some(i) => &msg[..i],
        None => msg.trim_end(),
    };
    let b = name.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphabetic()
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.')
        && ["Error", "Exception", "Exit", "Interrupt"]
            .iter()
            .any(|s| name.len() > s.len() && name.ends_with(s))
        && (msg.len() == name.len() || msg[name.len()..].starts_with(": "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use EventKind::*;

    /// One line of each variant, as the libraries and engines print them.
    #[test]
    fn variants() {
        for (msg, kind) in [
            ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.06 GiB is free.", CudaOom),
            ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB", CudaOom),
            ("RuntimeError: CUDA error: out of memory", CudaOom),
            ("[rank3]:[E1201 10:02:11.123456 1234 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=120, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600031 milliseconds before timing out.", Distributed),
            ("[rank0]:[E1201 10:12:11.000 ProcessGroupNCCL.cpp:1595] [PG 0 (default_pg) Rank 0] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives.", Distributed),
            ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5", Distributed),
            ("RuntimeError: NCCL Error 3: internal error - please report this issue to the NCCL developers", Distributed),
            ("Scheduler hit an exception: Traceback (most recent call last):", Crash),
            ("TokenizerManager hit an exception: Traceback (most recent call last):", Crash),
            ("Received sigquit from a child process. It usually means the child failed.", Crash),
            ("EngineCore encountered a fatal error.", Crash),
            ("vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.", Crash),
            ("AsyncLLMEngine has failed, terminating server process", Crash),
            ("Engine background task failed", Crash),
            ("Fatal Python error: Segmentation fault", Crash),
            ("Health check failed. Server couldn't get a response from detokenizer for last 20 seconds. tic start time: 10:02:11. last_heartbeat time: 10:01:40", HealthCheck),
            ("Prefill bootstrap failed for request rank=0 req.rid='abc' req.bootstrap_room=12 with exception KVTransferError(bootstrap_room=12): Failed to get kvcache from prefill instance, it might be dead", KvTransfer),
            ("Request abc timed out after 300.0 seconds in KVPoll.Bootstrapping", KvTransfer),
            ("Aborted request chatcmpl-6f2a.", Abort),
            ("Abort request rid='6f2a'", Abort),
            ("Recompiling function forward in /opt/vllm/model_executor/models/llama.py:550", Recompile),
            ("torch._dynamo hit config.recompile_limit (8)", Recompile),
            ("Traceback (most recent call last):", Traceback),
            ("RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered", Exception),
            ("ValueError: max_tokens must be at least 1, got 0.", Exception),
            ("KeyboardInterrupt", Exception),
            ("torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients.", Exception),
        ] {
            assert_eq!(classify(msg), Some(kind), "{msg}");
        }
    }

    /// Ordinary lines are none.
    #[test]
    fn ordinary_lines() {
        for msg in [
            "INFO:     127.0.0.1:48925 - \"POST /generate HTTP/1.1\" 200 OK",
            "Load weight begin. avail mem=77.22 GB",
            "Error rate is low",
            "Error",
            "error: something",
            "Using default error handler",
            "File \"/usr/lib/python3.10/site-packages/sglang/srt/managers/scheduler.py\", line 1832, in run_scheduler_process",
            "self.event_loop_normal()",
            "",
        ] {
            assert_eq!(classify(msg), None, "{msg}");
        }
    }
}
