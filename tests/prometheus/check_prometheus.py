#!/usr/bin/env python3
"""tokstat against a real Prometheus (issue 53): Debian's `prometheus` scrapes a
`prometheus_client` exporter of vLLM's names at known rates on loopback (tests/prometheus/
exporter.py: two engines, 1000 tok/s in all, 5 requests/s of which a fifth hit the cap, the
rates doubled in the second phase), then:

- `report --prometheus URL --since --until` over each phase: the exporter's generated tok/s,
  requests/s, cap-hit rate and each engine's share, within 1%;
- `compare` of the two phases: the factor of 2;
- the same window as the API's JSON (curl's), as `promtool tsdb dump` text and as exposition
  with per-sample timestamps: the same figures;
- the errors: the server down, a window with no samples, a selector the server refuses, a
  query over the sample limit (`--query.max-samples`, halved until it fits), TLS with basic
  auth through `--web.config.file` (a wrong password refused, `--ca-file` trusted), and a
  bearer token through a proxy that requires one (as managed services do).

Bounded in time (about 80 s of scraping), every process stopped at the end.
Usage: check_prometheus.py TOKSTAT_BINARY
"""
import decimal
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
PHASE_S = 36.0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(url, timeout=30, ctx=None, headers=None):
    end = time.time() + timeout
    while time.time() < end:
        try:
            req = urllib.request.Request(url, headers=headers or {})
            urllib.request.urlopen(req, timeout=2, context=ctx).read()
            return
        except Exception:
            time.sleep(0.3)
    raise SystemExit(f"not up: {url}")


def tokstat(bin, *args, ok=True):
    p = subprocess.run([bin, *args], capture_output=True, text=True)
    if ok and p.returncode != 0:
        raise SystemExit(f"tokstat {' '.join(args)}: exit {p.returncode}\n{p.stderr}")
    return p


def report(bin, *args):
    return json.loads(tokstat(bin, "report", "--format", "json", "-q", *args).stdout)["metrics"]


def go_g(v):
    """Go's `%g` of a float64: the shortest digits, in exponent form when the exponent is
    below -4 or at least 6 (strconv's ftoa, `shortest` case)."""
    if v == 0:
        return "0"
    d = decimal.Decimal(repr(v)).normalize()
    sign, digits, exp = d.as_tuple()
    digits = "".join(map(str, digits))
    e = len(digits) + exp - 1
    neg = "-" if sign else ""
    if e < -4 or e >= 6:
        mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{neg}{mant}e{'-' if e < 0 else '+'}{abs(e):02d}"
    return neg + format(d.copy_abs(), "f")


def close(got, want, what, tol=0.01):
    if want == 0:
        ok = abs(got) < 1e-9
    else:
        ok = abs(got - want) <= tol * abs(want)
    print(f"  {what}: {got:.4f} (want {want:.4f}) {'ok' if ok else 'FAIL'}")
    if not ok:
        raise SystemExit(f"{what}: {got} is not within {tol:.0%} of {want}")


def check_phase(m, factor, what):
    close(m["gen_tps"], 1000.0 * factor, f"{what} generated tok/s")
    close(m["requests_per_s"], 5.0 * factor, f"{what} requests/s")
    close(m["cap_hit_rate"], 0.2, f"{what} cap-hit rate")
    shares = {r["rank"]: r["share"] for r in m["ranks"]}
    close(shares['engine="0"'], 0.6, f"{what} engine 0 share")
    close(shares['engine="1"'], 0.4, f"{what} engine 1 share")


class BearerProxy(BaseHTTPRequestHandler):
    """Forwards GETs to Prometheus when they carry the bearer token, else 401."""
    target = ""
    token = ""

    def do_GET(self):
        if self.headers.get("Authorization") != f"Bearer {self.token}":
            self.send_response(401)
            self.end_headers()
            self.wfile.write(b'{"status":"error","errorType":"unauthorized","error":"missing or wrong token"}')
            return
        try:
            with urllib.request.urlopen(self.target + self.path) as r:
                status, body = 200, r.read()
        except urllib.error.HTTPError as e:
            status, body = e.code, e.read()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


def main():
    bin = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="tokstat-prom-")
    procs = []
    try:
        exporter_port, prom_port, tls_port = free_port(), free_port(), free_port()
        start = time.time() + 2
        procs.append(subprocess.Popen([sys.executable, os.path.join(HERE, "exporter.py"), str(exporter_port), str(start), str(PHASE_S), "1", "2"]))
        with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
            f.write(f"global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: vllm\n    static_configs:\n      - targets: ['127.0.0.1:{exporter_port}']\n")
        prom = ["prometheus", f"--config.file={tmp}/prometheus.yml", "--query.max-samples=100"]
        procs.append(subprocess.Popen(prom + [f"--storage.tsdb.path={tmp}/data", f"--web.listen-address=127.0.0.1:{prom_port}"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        url = f"http://127.0.0.1:{prom_port}"
        wait_for(f"{url}/-/ready")
        # TLS and basic auth on a second server over the same configuration
        # (a CA of the test's own, and the server's certificate signed by it: webpki takes
        # no CA certificate as a server's)
        ssl = lambda *a: subprocess.run(["openssl", *a], check=True, capture_output=True)
        ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=tokstat test CA",
            "-keyout", f"{tmp}/ca.key", "-out", f"{tmp}/ca.pem")
        ssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", f"{tmp}/key.pem", "-out", f"{tmp}/server.csr")
        with open(f"{tmp}/ext.cnf", "w") as f:
            f.write("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
        ssl("x509", "-req", "-in", f"{tmp}/server.csr", "-CA", f"{tmp}/ca.pem", "-CAkey", f"{tmp}/ca.key", "-CAcreateserial",
            "-days", "1", "-extfile", f"{tmp}/ext.cnf", "-out", f"{tmp}/cert.pem")
        import bcrypt
        hashed = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(rounds=4)).decode()
        with open(f"{tmp}/web.yml", "w") as f:
            f.write(f"tls_server_config:\n  cert_file: {tmp}/cert.pem\n  key_file: {tmp}/key.pem\nbasic_auth_users:\n  ops: {hashed}\n")
        procs.append(subprocess.Popen(prom + [f"--storage.tsdb.path={tmp}/data-tls", f"--web.listen-address=127.0.0.1:{tls_port}",
                                              f"--web.config.file={tmp}/web.yml"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        # VictoriaMetrics (Debian's `victoria-metrics`) scraping the same exporter: the same
        # API (`/api/v1/query` over a range selector gives raw samples)
        vm_port = free_port()
        procs.append(subprocess.Popen(["victoria-metrics", f"-promscrape.config={tmp}/prometheus.yml", f"-storageDataPath={tmp}/vm",
                                       f"-httpListenAddr=127.0.0.1:{vm_port}", "-search.latencyOffset=0s"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        vm_url = f"http://127.0.0.1:{vm_port}"
        wait_for(f"{vm_url}/health")
        BearerProxy.target, BearerProxy.token = url, "t0ken"
        proxy = ThreadingHTTPServer(("127.0.0.1", 0), BearerProxy)
        threading.Thread(target=proxy.serve_forever, daemon=True).start()
        proxy_url = f"http://127.0.0.1:{proxy.server_address[1]}"
        # two phases of scraping, and a little after
        time.sleep(max(0.0, start + 2 * PHASE_S + 3 - time.time()))
        w1 = (start + 4, start + PHASE_S - 2)
        w2 = (start + PHASE_S + 4, start + 2 * PHASE_S - 2)
        iso = lambda t: time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"
        win = lambda w: ["--since", iso(w[0]), "--until", iso(w[1])]

        print("report --prometheus, phase by phase (the sample limit of 100 halves each query)")
        m1 = report(bin, "--prometheus", url, *win(w1))
        check_phase(m1, 1, "phase 1")
        m2 = report(bin, "--prometheus", url, *win(w2))
        check_phase(m2, 2, "phase 2")

        print("the same windows from VictoriaMetrics")
        check_phase(report(bin, "--prometheus", vm_url, *win(w1)), 1, "VictoriaMetrics phase 1")
        check_phase(report(bin, "--prometheus", vm_url, *win(w2)), 2, "VictoriaMetrics phase 2")

        print("the same window saved: API JSON, promtool dump, timestamped exposition")
        q = urllib.parse.urlencode({"query": '{__name__=~"vllm[:_].+"}' + f"[{int((w2[1] - w2[0]) * 1000)}ms]", "time": f"{w2[1]:.3f}"})
        api = f"{tmp}/window.json"
        # (the limit is this server's: the saved query goes to the TLS one's twin without it)
        try:
            with urllib.request.urlopen(f"{url}/api/v1/query?{q}") as r:
                body = r.read()
        except urllib.error.HTTPError as e:
            body = e.read()
        if b'"status":"error"' in body:
            # a saved query over the sample limit: the file says so, and tokstat refuses it
            with open(api, "wb") as f:
                f.write(body)
            p = tokstat(bin, "report", "--format", "json", api, ok=False)
            assert p.returncode != 0 and "too many samples" in p.stderr, p.stderr
            print("  a saved error response: refused, with Prometheus' error")
        else:
            raise SystemExit("expected the sample limit to refuse the whole window at once")
        # the API JSON of the window, as query chunks small enough
        series = {}
        t, step = w2[0], 4.0
        while t < w2[1]:
            e = min(t + step, w2[1])
            q = urllib.parse.urlencode({"query": '{__name__=~"vllm[:_].+"}' + f"[{int((e - t) * 1000)}ms]", "time": f"{e:.3f}"})
            with urllib.request.urlopen(f"{url}/api/v1/query?{q}") as r:
                for s in json.load(r)["data"]["result"]:
                    key = json.dumps(s["metric"], sort_keys=True)
                    # (a range selector holds both ends before Prometheus 3: `(t, e]` kept)
                    series.setdefault(key, {"metric": s["metric"], "values": []})["values"] += [v for v in s["values"] if float(v[0]) > t]
            t = e
        with open(api, "w") as f:
            json.dump({"status": "success", "data": {"resultType": "matrix", "result": list(series.values())}}, f)
        ma = report(bin, api)
        check_phase(ma, 2, "API JSON")
        expo = f"{tmp}/window.prom"
        with open(expo, "w") as f:
            for s in series.values():
                labels = ",".join(f'{k}="{v}"' for k, v in sorted(s["metric"].items()) if k != "__name__")
                for ts, v in s["values"]:
                    f.write(f'{s["metric"]["__name__"]}{{{labels}}} {v} {int(round(float(ts) * 1000))}\n')
        me = report(bin, expo)
        check_phase(me, 2, "timestamped exposition")
        # (promtool opens the server's folder read-only, its head read from the write-ahead log)
        dump = f"{tmp}/dump.txt"
        with open(dump, "w") as f:
            subprocess.run(["promtool", "tsdb", "dump", f"--min-time={int(w2[0] * 1000) + 1}", f"--max-time={int(w2[1] * 1000)}", f"{tmp}/data"],
                           stdout=f, check=True)
        md = report(bin, dump)
        check_phase(md, 2, "promtool tsdb dump")
        # `promtool tsdb dump-openmetrics` (Prometheus 2.48+, not in Debian's 2.42): written as
        # its source writes it, `fmt.Printf("%s%s %g %.3f\n", metricName,
        # CondensedString(lbs), val, float64(ts)/1000)` then `# EOF` (cmd/promtool/tsdb.go)
        om = f"{tmp}/dump.om"
        with open(om, "w") as f:
            for s in series.values():
                labels = ",".join(f'{k}={json.dumps(v)}' for k, v in sorted(s["metric"].items()) if k != "__name__")
                for ts, v in s["values"]:
                    f.write(f'{s["metric"]["__name__"]}{{{labels}}} {go_g(float(v))} {float(ts):.3f}\n')
            f.write("# EOF\n")
        mo = report(bin, om)
        check_phase(mo, 2, "dump-openmetrics")
        # (the dump holds every series, Prometheus' own `up` and `scrape_*` among them)
        assert m2["samples"] == ma["samples"] == me["samples"], (m2["samples"], ma["samples"], me["samples"])
        for k in ("gen_tps", "requests_per_s", "cap_hit_rate", "generation_tokens", "scrapes"):
            vals = [round(m[k], 6) for m in (m2, ma, me, md, mo)]
            print(f"  {k}: --prometheus {vals[0]}, API JSON {vals[1]}, exposition {vals[2]}, dump {vals[3]}, dump-openmetrics {vals[4]}")
            assert len(set(vals)) == 1, (k, vals)

        print("compare of the two windows: the factor")
        c = json.loads(tokstat(bin, "compare", "--format", "json", "--prometheus", url,
                               f"c1={iso(w1[0])}..{iso(w1[1])}", f"c2={iso(w2[0])}..{iso(w2[1])}").stdout)
        gen = next(f for f in c["figures"] if f["name"] == "scraped gen tok/s")
        close(gen["ratio"], 2.0, "c2 / c1 scraped generated tok/s")

        print("pulse and watch --prometheus: the server's side of the window that just ended")
        # (the last phase's rates go on after it: factor 2 now)
        pu = json.loads(tokstat(bin, "pulse", "--format", "json", "--prometheus", url, "--window", "10s").stdout)
        close(pu["metrics"]["gen_tps"], 2000.0, "pulse generated tok/s")
        close(pu["metrics"]["requests_per_s"], 10.0, "pulse requests/s")
        close(pu["metrics"]["cap_hit_rate"], 0.2, "pulse cap-hit rate")
        # beside inputs (a job's completions followed over the window), the window it follows
        job = os.path.join(tmp, "job.jsonl")
        with open(job, "w") as f:
            f.write('{"finish_reason": "stop", "usage": {"completion_tokens": 10}}\n')
        pj = json.loads(tokstat(bin, "pulse", "--format", "json", "--prometheus", url, "--window", "4s", job).stdout)
        close(pj["metrics"]["gen_tps"], 2000.0, "pulse beside inputs, generated tok/s", tol=0.03)
        line = tokstat(bin, "watch", "--prometheus", url, "--every", "1s", "--for", "1s").stdout.strip().splitlines()[-1]
        fields = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        # (one interval between two scrapes: the scrape times' jitter is its error)
        close(float(fields["metrics_gen_tok/s"]), 2000.0, "watch generated tok/s, last interval", tol=0.03)
        p = tokstat(bin, "pulse", "--prometheus", f"http://127.0.0.1:{free_port()}", "--window", "5s", ok=False)
        assert p.returncode != 0 and "connection refused" in p.stderr and "panicked" not in p.stderr, p.stderr
        print("  server down:", p.stderr.strip().splitlines()[-1])

        print("access: TLS with basic auth, a bearer token")
        tls = f"https://ops:s3cret@127.0.0.1:{tls_port}"
        time.sleep(1)
        mt = report(bin, "--prometheus", tls, "--ca-file", f"{tmp}/ca.pem", "--since", "30s")
        assert mt["gen_tps"] > 0, mt
        p = tokstat(bin, "report", "-q", "--prometheus", f"https://ops:wrong@127.0.0.1:{tls_port}", "--ca-file", f"{tmp}/ca.pem", ok=False)
        assert p.returncode != 0 and "HTTP 401" in p.stderr and "wrong" not in p.stderr, p.stderr
        print("  wrong password:", p.stderr.strip().splitlines()[-1])
        p = tokstat(bin, "report", "-q", "--prometheus", tls, ok=False)
        assert p.returncode != 0 and "s3cret" not in p.stderr, p.stderr
        print("  untrusted certificate:", p.stderr.strip().splitlines()[-1])
        os.environ["PROM_TOKEN"] = "t0ken"
        mb = report(bin, "--prometheus", proxy_url, "--bearer-token-env", "PROM_TOKEN", *win(w2))
        check_phase(mb, 2, "through the bearer proxy")
        os.environ["PROM_TOKEN"] = "nope"
        p = tokstat(bin, "report", "-q", "--prometheus", proxy_url, "--bearer-token-env", "PROM_TOKEN", *win(w2), ok=False)
        assert p.returncode != 0 and "HTTP 401" in p.stderr and "nope" not in p.stderr, p.stderr
        print("  wrong token:", p.stderr.strip().splitlines()[-1])

        print("errors: server down, no samples, a bad selector")
        down = f"http://127.0.0.1:{free_port()}"
        for args, want in [
            (["--prometheus", down], "connection refused"),
            (["--prometheus", url, "--since", "2020-01-01T00:00:00Z", "--until", "2020-01-01T01:00:00Z"], "no sample"),
            (["--prometheus", url, "--match", "{job=~"], "HTTP 400"),
        ]:
            p = tokstat(bin, "report", "-q", *args, ok=False)
            assert p.returncode != 0 and want in p.stderr and "panicked" not in p.stderr, (args, p.returncode, p.stderr)
            print(f"  {want}: exit {p.returncode}: {p.stderr.strip().splitlines()[-1]}")
        print("prometheus: ok")
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
