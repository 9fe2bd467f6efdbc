build-dbg/obj/diagnose.o: sim/diagnose.c include/gpuplan/diagnose.h \
 include/gpuplan/footprint.h include/gpuplan/catalog.h \
 include/gpuplan/common.h include/gpuplan/results.h \
 include/gpuplan/scenario.h include/gpuplan/gpupolicy.h \
 include/gpuplan/cluster.h include/gpuplan/contention.h \
 include/gpuplan/placement.h include/gpuplan/report.h
include/gpuplan/diagnose.h:
include/gpuplan/footprint.h:
include/gpuplan/catalog.h:
include/gpuplan/common.h:
include/gpuplan/results.h:
include/gpuplan/scenario.h:
include/gpuplan/gpupolicy.h:
include/gpuplan/cluster.h:
include/gpuplan/contention.h:
include/gpuplan/placement.h:
include/gpuplan/report.h:
