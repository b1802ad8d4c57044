"""A deterministic OpenAI-compatible server for load generators: TTFT 40 ms, one token
every 8 ms, output = max_tokens (default 64); every 10th request by arrival fails 500.
`GET /metrics` serves vLLM's names (as prometheus_client's text format writes them) of
what it did: tokens, finished requests, running requests, KV usage (running / 64), a TTFT
histogram and the end-to-end latency and time per output token it measured of each request
(histograms)."""
import json, sys, time, threading, itertools
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
counter = itertools.count()
LOCK = threading.Lock()
STATS = {"prompt": 0, "generated": 0, "length": 0, "running": 0, "ttft": 0}
E2E_LE, TPOT_LE = (0.1, 0.25, 0.5, 1.0, 2.5), (0.005, 0.01, 0.025, 0.05)
HIST = {"e2e": [0] * len(E2E_LE), "e2e_n": 0, "e2e_sum": 0.0,
        "tpot": [0] * len(TPOT_LE), "tpot_n": 0, "tpot_sum": 0.0}
LABELS = 'engine="0",model_name="mock-model"'
def metrics():
    with LOCK:
        s = dict(STATS)
        h = {k: (list(v) if isinstance(v, list) else v) for k, v in HIST.items()}
    out = []
    def fam(name, kind, rows):
        out.append(f"# HELP {name} {name}\n# TYPE {name} {kind}\n")
        out.extend(f"{n}{{{LABELS}{l}}} {float(v)}\n" for n, l, v in rows)
    fam("vllm:num_requests_running", "gauge", [("vllm:num_requests_running", "", s["running"])])
    fam("vllm:num_requests_waiting", "gauge", [("vllm:num_requests_waiting", "", 0)])
    fam("vllm:prompt_tokens_total", "counter", [("vllm:prompt_tokens_total", "", s["prompt"])])
    fam("vllm:generation_tokens_total", "counter", [("vllm:generation_tokens_total", "", s["generated"])])
    fam("vllm:request_success_total", "counter",
        [("vllm:request_success_total", f',finished_reason="{r}"', s["length"] if r == "length" else 0) for r in ("stop", "length", "abort")])
    n = s["ttft"]
    fam("vllm:time_to_first_token_seconds", "histogram",
        [("vllm:time_to_first_token_seconds_bucket", f',le="{le}"', n) for le in ("0.05", "0.1", "+Inf")]
        + [("vllm:time_to_first_token_seconds_count", "", n), ("vllm:time_to_first_token_seconds_sum", "", round(0.04 * n, 6))])
    fam("vllm:kv_cache_usage_perc", "gauge", [("vllm:kv_cache_usage_perc", "", s["running"] / 64)])
    for name, key, les in (("vllm:e2e_request_latency_seconds", "e2e", E2E_LE),
                           ("vllm:request_time_per_output_token_seconds", "tpot", TPOT_LE)):
        fam(name, "histogram",
            [(f"{name}_bucket", f',le="{le}"', c) for le, c in zip(les, h[key])]
            + [(f"{name}_bucket", ',le="+Inf"', h[key + "_n"]),
               (f"{name}_count", "", h[key + "_n"]), (f"{name}_sum", "", round(h[key + "_sum"], 6))])
    return "".join(out).encode()
def observe(key, les, v):
    with LOCK:
        HIST[key + "_n"] += 1; HIST[key + "_sum"] += v
        for i, le in enumerate(les):
            if v <= le: HIST[key][i] += 1
def count(**d):
    with LOCK:
        for k, v in d.items(): STATS[k] += v
FAIL_EVERY = int(sys.argv[2]) if len(sys.argv) > 2 else 0
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def _json(self, code, obj):
        b = json.dumps(obj).encode()
        self.send_response(code); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b))); self.end_headers(); self.wfile.write(b)
    def do_GET(self):
        if self.path.startswith("/v1/models"):
            return self._json(200, {"object": "list", "data": [{"id": "mock-model", "object": "model"}]})
        if self.path.startswith("/health"):
            return self._json(200, {})
        if self.path.startswith("/metrics"):
            b = metrics()
            self.send_response(200); self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(b))); self.end_headers(); self.wfile.write(b)
            return
        self._json(404, {"error": "not found"})
    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0)); body = json.loads(self.rfile.read(n) or b"{}")
        k = next(counter)
        if FAIL_EVERY and k % FAIL_EVERY == FAIL_EVERY - 1:
            time.sleep(0.01)
            return self._json(500, {"error": {"message": "mock failure", "type": "server_error"}})
        chat = "chat" in self.path
        out = int(body.get("max_completion_tokens") or body.get("max_tokens") or 64)
        prompt = body.get("messages") or body.get("prompt") or ""
        ptoks = max(1, len(json.dumps(prompt)) // 4)
        stream = body.get("stream", False)
        obj = "chat.completion" if chat else "text_completion"
        usage = {"prompt_tokens": ptoks, "completion_tokens": out, "total_tokens": ptoks + out}
        count(running=1)
        t0 = time.monotonic()
        try:
            return self._answer(k, chat, out, stream, obj, usage, body, ptoks)
        finally:
            e2e = time.monotonic() - t0
            observe("e2e", E2E_LE, e2e)
            if out > 1: observe("tpot", TPOT_LE, (e2e - 0.040) / (out - 1))
            count(running=-1)
    def _answer(self, k, chat, out, stream, obj, usage, body, ptoks):
        # the server's counters move as an engine's do: prompt tokens and the first token
        # at the first token, each further token as it is sent, a request when it finishes
        time.sleep(0.040)
        count(prompt=ptoks, generated=1, ttft=1)
        if not stream:
            time.sleep(0.008 * (out - 1))
            count(generated=out - 1, length=1)
            ch = {"index": 0, "finish_reason": "length"}
            if chat: ch["message"] = {"role": "assistant", "content": " tok" * out}
            else: ch["text"] = " tok" * out
            return self._json(200, {"id": f"r{k}", "object": obj, "created": int(time.time()), "model": "mock-model", "choices": [ch], "usage": usage})
        self.send_response(200); self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache"); self.send_header("Connection", "close"); self.end_headers()
        def send(o):
            self.wfile.write(b"data: " + json.dumps(o).encode() + b"\n\n"); self.wfile.flush()
        for i in range(out):
            if i: time.sleep(0.008); count(generated=1)
            ch = {"index": 0, "finish_reason": "length" if i == out - 1 else None}
            if chat: ch["delta"] = {"content": " tok"} if i else {"role": "assistant", "content": " tok"}
            else: ch["text"] = " tok"
            send({"id": f"r{k}", "object": obj + (".chunk" if chat else ""), "created": int(time.time()), "model": "mock-model", "choices": [ch]})
        inc = (body.get("stream_options") or {}).get("include_usage")
        if inc: send({"id": f"r{k}", "object": obj + (".chunk" if chat else ""), "model": "mock-model", "choices": [], "usage": usage})
        count(length=1)
        self.wfile.write(b"data: [DONE]\n\n"); self.wfile.flush()
        self.close_connection = True
ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
