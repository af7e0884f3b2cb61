"""flows.csv cm_retries and setup_done_ns (docs/outputs.md) against the
captures: loss injected with links.loss (the one loss key) on the two-host
cable, over seeds; the CM REQs are counted in h0's transmit capture and
h1's receive capture by an independent pcap parser (IBTA MAD attribute
0x0010 in a UD SEND_ONLY to QP1). Expected from first principles: while a
connection is set up nothing else is in flight, so each REQ left
unanswered delays the setup by exactly hosts.rto (the REQ is re-sent when
its timer expires): setup_done = the loss-free setup + cm_retries x rto.
Bugs that fail it: the first REQ counted as a retry, retries not counted,
the setup time taken at the first REQ, at the receiver or at the RTU."""
import os
import struct

from clitest import SRC, check, finish, rocesim, rows, summary, tempdir

RTO_NS = 4194304  # hosts.rto default: IBTA local ACK timeout 10 = 4.096 us x 2^10
ROCE_PORT = 4791
CM_REQ = 0x0010

d = tempdir()
two = os.path.join(SRC, "configs/scenarios/two_hosts.yaml")
# One 64 B flow starting at 1 us (RC with CM), 20 ms: room for a few retries.
base = ["--set", "hosts.transport=rc", "--set", "sim.duration=20ms", "--set", "flows=[{src: h0, dst: h1, size: 64B, start: 1us}]",
        "--pcap", "h0:0", "--pcap", "h1:0", "--quiet"]


def cm_reqs(path):
    """Times (ns) of the CM REQs in a capture."""
    data = open(path, "rb").read()
    magic = struct.unpack("<I", data[:4])[0]
    scale = 1 if magic == 0xA1B23C4D else 1000  # ns or us resolution
    at, out = 24, []
    while at + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack("<IIII", data[at:at + 16])
        f = data[at + 16:at + 16 + incl]
        at += 16 + incl
        off = 12
        eth = struct.unpack(">H", f[off:off + 2])[0]
        if eth == 0x8100:
            off += 4
            eth = struct.unpack(">H", f[off:off + 2])[0]
        if eth != 0x0800:
            continue
        ip = off + 2
        ihl = (f[ip] & 0x0F) * 4
        if f[ip + 9] != 17:
            continue
        udp = ip + ihl
        if struct.unpack(">H", f[udp + 2:udp + 4])[0] != ROCE_PORT:
            continue
        bth = udp + 8
        opcode, dqp = f[bth], struct.unpack(">I", f[bth + 4:bth + 8])[0] & 0xFFFFFF
        if opcode != 100 or dqp != 1:  # UD SEND_ONLY to QP1: a MAD
            continue
        mad = bth + 12 + 8  # after BTH and DETH
        if struct.unpack(">H", f[mad + 16:mad + 18])[0] == CM_REQ:
            out.append(sec * 10**9 + frac * scale)
    return out


def run(name, *extra):
    out = os.path.join(d, name)
    rc, so, se = rocesim("run", two, "--out", out, *base, *extra)
    check(rc == 0, "%s: exit 0 (%d): %s" % (name, rc, se))
    return out, rows(os.path.join(out, "flows.csv"))[0]


out0, f0 = run("clean")
check(f0["cm_retries"] == "0" and f0["setup_done_ns"] != "", "no loss: no retry, setup done")
setup0 = float(f0["setup_done_ns"])
check(len(cm_reqs(os.path.join(out0, "pcap/h0-p0-tx.pcap"))) == 1, "no loss: one REQ on the wire")

first_lost = 0
for seed in range(1, 41):
    out, f = run("s%d" % seed, "--set", "links.loss=0.2", "--seed", str(seed))
    sent = cm_reqs(os.path.join(out, "pcap/h0-p0-tx.pcap"))
    got = cm_reqs(os.path.join(out, "pcap/h1-p0-rx.pcap"))
    check(int(f["cm_retries"]) == len(sent) - 1, "seed %d: cm_retries %s, REQs sent %d" % (seed, f["cm_retries"], len(sent)))
    if f["setup_done_ns"]:
        want = setup0 + int(f["cm_retries"]) * RTO_NS
        check(abs(float(f["setup_done_ns"]) - want) < 0.0005,
              "seed %d: setup_done_ns %s == loss-free %.3f + %s x rto" % (seed, f["setup_done_ns"], setup0, f["cm_retries"]))
    lost = sum(l["lost"] for l in summary(out)["links"])
    if lost == 1 and len(sent) == 2 and len(got) == 1 and got[0] > sent[0] + RTO_NS // 2:
        # The very first frame (the first REQ) was the one frame lost.
        first_lost += 1
        check(f["cm_retries"] == "1", "seed %d: first REQ lost: one CM retry" % seed)
        check(f["timeouts"] == "0", "seed %d: a CM retry is not a data timeout" % seed)
check(first_lost > 0, "some seed loses the first REQ (loss 0.2 over 40 seeds)")
finish([d])
