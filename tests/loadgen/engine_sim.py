"""A small engine simulator for load generators, with the truth of every request (issue 55).

An OpenAI-compatible server (`/v1/completions`, `/v1/chat/completions`, streaming or not,
`/v1/models`, `/health`, `/metrics`) in front of a scheduler that works as an engine does,
one step at a time:

- at most `--max-running` requests run; the rest wait, first come first served;
- a step admits waiting requests while there is room, then lasts `--decode-ms` plus
  `--prefill-us-per-token` for each prompt token admitted in it; each request admitted in a
  step gets its first token at the step's end, every running request one more token per step
  after that, and a request finishes at its `max_tokens`;
- KV usage is the running requests' prompt and generated tokens over `--kv-tokens`. A
  waiting request is admitted only while its tokens fit; when a step's new tokens overflow
  the cache, the request admitted last is preempted (vLLM V1's recompute): back to the head
  of the queue, its tokens so far kept for its client, and prefilled again (prompt and
  generated tokens) when it is admitted again.

It writes what vLLM (0.11.1+) writes: a stats line every `--stats-interval` seconds (with
`Preemptions: N` in it when there were any since the one before), and
uvicorn's access line as a response starts, stamped by the server's clock — the true time
plus `--clock-offset` seconds (a timezone's hours and some skew), as `MM-DD HH:MM:SS`, no
year. `/metrics` serves vLLM's names of what it did. `--truth FILE` gets one JSON line per
finished request, in true Unix seconds: arrival, admitted, first token, finish, its queue
wait, prefill and decode time, and its token counts.

    python3 engine_sim.py --port 8000 --max-running 8 --log server.log --truth truth.jsonl
"""
import argparse, itertools, json, queue, threading, time
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

p = argparse.ArgumentParser()
p.add_argument("--port", type=int, default=8000)
p.add_argument("--max-running", type=int, default=8)
p.add_argument("--decode-ms", type=float, default=10.0)
p.add_argument("--prefill-us-per-token", type=float, default=50.0)
p.add_argument("--kv-tokens", type=int, default=4096)
p.add_argument("--stats-interval", type=float, default=1.0)
p.add_argument("--clock-offset", type=float, default=0.0)
p.add_argument("--log", default="-")
p.add_argument("--truth")
p.add_argument("--fail-every", type=int, default=0)
ARGS = p.parse_args()

LOG = open(ARGS.log, "a", buffering=1) if ARGS.log != "-" else None
TRUTH = open(ARGS.truth, "a", buffering=1) if ARGS.truth else None
LOCK = threading.Condition()
WAITING, RUNNING = [], []
TOTALS = {"prompt": 0, "generated": 0, "length": 0, "preempted": 0}
# prompt and generated tokens since the last stats line
WINDOW = {"prompt": 0, "generated": 0, "preempted": 0}
HIST_LE = {
    "ttft": (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
    "e2e": (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
    "queue": (0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
}
HIST = {k: {"b": [0] * len(v), "n": 0, "sum": 0.0} for k, v in HIST_LE.items()}
ids = itertools.count()


def log(line):
    """A line of the server's log, stamped by the server's clock."""
    t = time.time() + ARGS.clock_offset
    stamp = time.strftime("%m-%d %H:%M:%S", time.gmtime(t))
    text = line.format(stamp=stamp)
    if LOG:
        LOG.write(text + "\n")
    else:
        print(text, flush=True)


def observe(name, v):
    h = HIST[name]
    h["n"] += 1
    h["sum"] += v
    for i, le in enumerate(HIST_LE[name]):
        if v <= le:
            h["b"][i] += 1


class Req:
    def __init__(self, prompt_tokens, max_tokens):
        self.id = next(ids)
        self.prompt = prompt_tokens
        self.max = max(1, max_tokens)
        self.out = 0
        self.arrival = time.time()
        self.admitted = self.first = self.finish = None
        self.preempted = 0
        self.tokens = queue.Queue()


def kv_used():
    return sum(r.prompt + r.out for r in RUNNING)


def kv_usage():
    return min(1.0, kv_used() / ARGS.kv_tokens)


def engine():
    """The scheduler's loop: a step at a time while there is work."""
    while True:
        with LOCK:
            while not WAITING and not RUNNING:
                LOCK.wait()
            admitted = []
            while (WAITING and len(RUNNING) < ARGS.max_running
                   and (not RUNNING or kv_used() + WAITING[0].prompt + WAITING[0].out
                        <= ARGS.kv_tokens)):
                r = WAITING.pop(0)
                if r.admitted is None:
                    r.admitted = time.time()
                RUNNING.append(r)
                admitted.append(r)
            # (a preempted request is computed again: its prompt and its tokens so far)
            prefill = sum(r.prompt + r.out for r in admitted)
        time.sleep(ARGS.decode_ms / 1000 + prefill * ARGS.prefill_us_per_token / 1e6)
        now = time.time()
        done = []
        with LOCK:
            TOTALS["prompt"] += prefill
            WINDOW["prompt"] += prefill
            for r in RUNNING:
                r.out += 1
                TOTALS["generated"] += 1
                WINDOW["generated"] += 1
                if r.first is None:
                    r.first = now
                    observe("ttft", now - r.arrival)
                    observe("queue", r.admitted - r.arrival)
                if r.out >= r.max:
                    r.finish = now
                    done.append(r)
            for r in done:
                RUNNING.remove(r)
                TOTALS["length"] += 1
                observe("e2e", now - r.arrival)
            # the next step's tokens do not fit: the request admitted last goes back
            while len(RUNNING) > 1 and kv_used() + len(RUNNING) > ARGS.kv_tokens:
                r = RUNNING.pop()
                r.preempted += 1
                TOTALS["preempted"] += 1
                WINDOW["preempted"] += 1
                WAITING.insert(0, r)
        for r in RUNNING + done:
            r.tokens.put(r.out)
        for r in done:
            r.tokens.put(None)
            if TRUTH:
                TRUTH.write(json.dumps({
                    "id": r.id, "arrival": r.arrival, "admitted": r.admitted,
                    "first_token": r.first, "finish": r.finish,
                    "queue_s": r.admitted - r.arrival,
                    "prefill_s": r.first - r.admitted,
                    "decode_s": r.finish - r.first,
                    "prompt_tokens": r.prompt, "output_tokens": r.out,
                    "preempted": r.preempted,
                }) + "\n")


def stats():
    """vLLM 0.11.1+'s stats line (`vllm/v1/metrics/loggers.py`, LoggingStatLogger.log)."""
    last = time.time()
    while True:
        time.sleep(ARGS.stats_interval)
        now = time.time()
        with LOCK:
            span = now - last
            gen, pre = WINDOW["generated"] / span, WINDOW["prompt"] / span
            preempted = WINDOW["preempted"]
            WINDOW["generated"] = WINDOW["prompt"] = WINDOW["preempted"] = 0
            running, waiting, kv = len(RUNNING), len(WAITING), kv_usage()
        last = now
        log("(APIServer pid=1) INFO {stamp} [loggers.py:236] Engine 000: "
            f"Avg prompt throughput: {pre:.1f} tokens/s, Avg generation throughput: {gen:.1f} tokens/s, "
            f"Running: {running} reqs, Waiting: {waiting} reqs, "
            + (f"Preemptions: {preempted}, " if preempted else "")
            + f"GPU KV cache usage: {kv * 100:.1f}%, "
            "Prefix cache hit rate: 0.0%")


def metrics():
    L = 'engine="0",model_name="sim-model"'
    with LOCK:
        t = dict(TOTALS)
        running, waiting, kv = len(RUNNING), len(WAITING), kv_usage()
        hist = {k: {"b": list(v["b"]), "n": v["n"], "sum": v["sum"]} for k, v in HIST.items()}
    out = []

    def fam(name, kind, rows):
        out.append(f"# HELP {name} {name}\n# TYPE {name} {kind}\n")
        out.extend(f"{n}{{{L}{lab}}} {float(v)}\n" for n, lab, v in rows)
    fam("vllm:num_requests_running", "gauge", [("vllm:num_requests_running", "", running)])
    fam("vllm:num_requests_waiting", "gauge", [("vllm:num_requests_waiting", "", waiting)])
    fam("vllm:kv_cache_usage_perc", "gauge", [("vllm:kv_cache_usage_perc", "", kv)])
    fam("vllm:prompt_tokens_total", "counter", [("vllm:prompt_tokens_total", "", t["prompt"])])
    fam("vllm:generation_tokens_total", "counter", [("vllm:generation_tokens_total", "", t["generated"])])
    fam("vllm:num_preemptions_total", "counter", [("vllm:num_preemptions_total", "", t["preempted"])])
    fam("vllm:request_success_total", "counter",
        [("vllm:request_success_total", f',finished_reason="{r}"', t["length"] if r == "length" else 0)
         for r in ("stop", "length", "abort")])
    for key, name in (("ttft", "vllm:time_to_first_token_seconds"),
                      ("e2e", "vllm:e2e_request_latency_seconds"),
                      ("queue", "vllm:request_queue_time_seconds")):
        h = hist[key]
        fam(name, "histogram",
            [(f"{name}_bucket", f',le="{le}"', c) for le, c in zip(HIST_LE[key], h["b"])]
            + [(f"{name}_bucket", ',le="+Inf"', h["n"]), (f"{name}_count", "", h["n"]),
               (f"{name}_sum", "", round(h["sum"], 6))])
    return "".join(out).encode()


arrivals = itertools.count()


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def access(self, code, reason):
        host, port = self.client_address[:2]
        log(f'(APIServer pid=1) INFO:     {host}:{port} - "{self.command} {self.path} HTTP/1.1" {code} {reason}')

    def _json(self, code, obj, logged=True):
        b = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
        if logged:
            self.access(code, {200: "OK", 404: "Not Found", 500: "Internal Server Error"}[code])

    def do_GET(self):
        if self.path.startswith("/v1/models"):
            return self._json(200, {"object": "list", "data": [{"id": "sim-model", "object": "model"}]})
        if self.path.startswith("/health"):
            return self._json(200, {}, logged=False)
        if self.path.startswith("/metrics"):
            b = metrics()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(b)))
            self.end_headers()
            self.wfile.write(b)
            return
        self._json(404, {"error": "not found"})

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(n) or b"{}")
        k = next(arrivals)
        if ARGS.fail_every and k % ARGS.fail_every == ARGS.fail_every - 1:
            return self._json(500, {"error": {"message": "simulated failure", "type": "server_error"}})
        chat = "chat" in self.path
        out = int(body.get("max_completion_tokens") or body.get("max_tokens") or 64)
        prompt = body.get("messages") or body.get("prompt") or ""
        ptoks = max(1, len(json.dumps(prompt)) // 4)
        r = Req(ptoks, out)
        with LOCK:
            WAITING.append(r)
            LOCK.notify()
        obj = "chat.completion" if chat else "text_completion"
        usage = {"prompt_tokens": ptoks, "completion_tokens": r.max, "total_tokens": ptoks + r.max}
        if not body.get("stream", False):
            while r.tokens.get() is not None:
                pass
            ch = {"index": 0, "finish_reason": "length"}
            if chat:
                ch["message"] = {"role": "assistant", "content": " tok" * r.max}
            else:
                ch["text"] = " tok" * r.max
            return self._json(200, {"id": f"r{r.id}", "object": obj, "created": int(time.time()),
                                     "model": "sim-model", "choices": [ch], "usage": usage})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.access(200, "OK")
        kind = obj + (".chunk" if chat else "")

        def send(o):
            self.wfile.write(b"data: " + json.dumps(o).encode() + b"\n\n")
            self.wfile.flush()
        sent = 0
        while (got := r.tokens.get()) is not None:
            for i in range(sent, got):
                ch = {"index": 0, "finish_reason": "length" if i == r.max - 1 else None}
                if chat:
                    ch["delta"] = {"content": " tok"} if i else {"role": "assistant", "content": " tok"}
                else:
                    ch["text"] = " tok"
                send({"id": f"r{r.id}", "object": kind, "created": int(time.time()),
                      "model": "sim-model", "choices": [ch]})
            sent = got
        if (body.get("stream_options") or {}).get("include_usage"):
            send({"id": f"r{r.id}", "object": kind, "model": "sim-model", "choices": [], "usage": usage})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


threading.Thread(target=engine, daemon=True).start()
threading.Thread(target=stats, daemon=True).start()
ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", ARGS.port), H).serve_forever()
