#!/usr/bin/env python3
"""A vLLM-named exporter of known rates, for a real Prometheus to scrape (tests/prometheus).

prometheus_client writes these as vLLM does (it is vLLM's own client): counters
`vllm:generation_tokens` (exposed as `vllm:generation_tokens_total` in the text format,
`vllm_generation_tokens_total` under `# TYPE vllm:generation_tokens` in OpenMetrics, which
is what Prometheus asks for), `vllm:request_success{finished_reason}`, gauges
`vllm:num_requests_running` / `_waiting`, two engines (`engine="0"`, `"1"`).

The rates follow a schedule: phase k runs from `start + k * phase_s` and multiplies every rate
by `factors[k]`. Counters are advanced from the clock at each scrape (exact, whatever the
scrape times), so the true increase over any window is known: printed as JSON by
`--truth T1 T2`.

Usage: exporter.py PORT START PHASE_S FACTOR... (serves until killed)
"""
import sys
import time

# per engine: generated tok/s, finished requests/s by reason, at factor 1
GEN = {"0": 600.0, "1": 400.0}
LENGTH = {"0": 0.6, "1": 0.4}
STOP = {"0": 2.4, "1": 1.6}
RUNNING = {"0": 48, "1": 32}


def integral(rate, start, phase_s, factors, t):
    """The counter's value at t: rate * factor integrated from start."""
    total, t0 = 0.0, start
    for k, f in enumerate(factors):
        t1 = start + (k + 1) * phase_s if k + 1 < len(factors) else float("inf")
        if t <= t0:
            break
        total += rate * f * (min(t, t1) - t0)
        t0 = t1
    return total


def factor_at(start, phase_s, factors, t):
    k = int(max(0.0, t - start) // phase_s)
    return factors[min(k, len(factors) - 1)]


def main():
    port, start, phase_s = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    factors = [float(f) for f in sys.argv[4:]]
    from prometheus_client import CollectorRegistry, start_http_server
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

    class Engine:
        def collect(self):
            now = time.time()
            labels = ["engine", "model_name"]
            gen = CounterMetricFamily("vllm:generation_tokens", "Number of generation tokens processed.", labels=labels)
            done = CounterMetricFamily("vllm:request_success", "Count of successfully processed requests.", labels=labels + ["finished_reason"])
            run = GaugeMetricFamily("vllm:num_requests_running", "Number of requests in model execution batches.", labels=labels)
            wait = GaugeMetricFamily("vllm:num_requests_waiting", "Number of requests waiting to be processed.", labels=labels)
            f = factor_at(start, phase_s, factors, now)
            for e in GEN:
                lv = [e, "Qwen/Qwen3-8B"]
                gen.add_metric(lv, integral(GEN[e], start, phase_s, factors, now), created=start)
                done.add_metric(lv + ["length"], integral(LENGTH[e], start, phase_s, factors, now), created=start)
                done.add_metric(lv + ["stop"], integral(STOP[e], start, phase_s, factors, now), created=start)
                run.add_metric(lv, RUNNING[e] * f)
                wait.add_metric(lv, 0.0)
            yield from (gen, done, run, wait)

    reg = CollectorRegistry()
    reg.register(Engine())
    start_http_server(port, addr="127.0.0.1", registry=reg)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
