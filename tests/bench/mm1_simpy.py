#!/usr/bin/python3
# The M/M/1 queue of tests/bench/mm1-200k.yaml in SimPy 2 (Debian's
# python3-simpy), for `make bench` to time beside gpuplan: arrivals at 0.9/h,
# exponential service with mean 1h, one server, FIFO.  Prints the customers,
# the mean wait in queue (h; theory 9 h) and the CPU seconds of the process.
import random
import sys
import time

from SimPy.Simulation import (Process, Resource, activate, hold, initialize, now, release,
                              request, simulate)


class Customer(Process):
    def visit(self, server, waits, rng):
        arrive = now()
        yield request, self, server
        waits.append(now() - arrive)
        yield hold, self, rng.expovariate(1.0)
        yield release, self, server


class Source(Process):
    def generate(self, n, server, waits, rng):
        for _ in range(n):
            yield hold, self, rng.expovariate(0.9)
            c = Customer()
            activate(c, c.visit(server, waits, rng))


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
    t0 = time.process_time()
    rng = random.Random(1)
    waits = []
    initialize()
    server = Resource(capacity=1)
    src = Source()
    activate(src, src.generate(n, server, waits, rng))
    simulate(until=1e12)
    wall = time.process_time() - t0
    print("customers %d mean_wait_h %.3f wall_s %.3f" % (len(waits), sum(waits) / len(waits), wall))


main()
