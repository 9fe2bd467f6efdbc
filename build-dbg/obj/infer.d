build-dbg/obj/infer.o: sim/infer.c include/gpuplan/infer.h \
 include/gpuplan/cluster.h include/gpuplan/contention.h \
 include/gpuplan/scenario.h include/gpuplan/catalog.h \
 include/gpuplan/common.h include/gpuplan/gpupolicy.h \
 include/gpuplan/collect.h include/gpuplan/results.h \
 include/gpuplan/engine.h include/gpuplan/placement.h \
 include/gpuplan/roofline.h include/gpuplan/footprint.h \
 include/gpuplan/arrivals.h include/gpuplan/requests.h
include/gpuplan/infer.h:
include/gpuplan/cluster.h:
include/gpuplan/contention.h:
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/common.h:
include/gpuplan/gpupolicy.h:
include/gpuplan/collect.h:
include/gpuplan/results.h:
include/gpuplan/engine.h:
include/gpuplan/placement.h:
include/gpuplan/roofline.h:
include/gpuplan/footprint.h:
include/gpuplan/arrivals.h:
include/gpuplan/requests.h:
