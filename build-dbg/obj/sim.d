build-dbg/obj/sim.o: sim/sim.c include/gpuplan/sim.h \
 include/gpuplan/results.h include/gpuplan/common.h \
 include/gpuplan/scenario.h include/gpuplan/catalog.h \
 include/gpuplan/gpupolicy.h include/gpuplan/arrivals.h \
 include/gpuplan/cluster.h include/gpuplan/contention.h \
 include/gpuplan/collect.h include/gpuplan/engine.h \
 include/gpuplan/infer.h include/gpuplan/placement.h \
 include/gpuplan/roofline.h include/gpuplan/footprint.h \
 include/gpuplan/reasons.h include/gpuplan/sched.h \
 include/gpuplan/units.h include/gpuplan/cost.h \
 include/gpuplan/diagnose.h include/gpuplan/inflation.h \
 include/gpuplan/quota.h
include/gpuplan/sim.h:
include/gpuplan/results.h:
include/gpuplan/common.h:
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/gpupolicy.h:
include/gpuplan/arrivals.h:
include/gpuplan/cluster.h:
include/gpuplan/contention.h:
include/gpuplan/collect.h:
include/gpuplan/engine.h:
include/gpuplan/infer.h:
include/gpuplan/placement.h:
include/gpuplan/roofline.h:
include/gpuplan/footprint.h:
include/gpuplan/reasons.h:
include/gpuplan/sched.h:
include/gpuplan/units.h:
include/gpuplan/cost.h:
include/gpuplan/diagnose.h:
include/gpuplan/inflation.h:
include/gpuplan/quota.h:
