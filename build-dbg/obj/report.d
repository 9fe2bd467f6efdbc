build-dbg/obj/report.o: sim/report.c include/gpuplan/report.h \
 include/gpuplan/results.h include/gpuplan/common.h \
 include/gpuplan/scenario.h include/gpuplan/catalog.h \
 include/gpuplan/gpupolicy.h include/gpuplan/diagnose.h \
 include/gpuplan/footprint.h include/gpuplan/units.h
include/gpuplan/report.h:
include/gpuplan/results.h:
include/gpuplan/common.h:
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/gpupolicy.h:
include/gpuplan/diagnose.h:
include/gpuplan/footprint.h:
include/gpuplan/units.h:
