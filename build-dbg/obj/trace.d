build-dbg/obj/trace.o: sim/trace.c include/gpuplan/trace.h \
 include/gpuplan/scenario.h include/gpuplan/catalog.h \
 include/gpuplan/common.h include/gpuplan/gpupolicy.h \
 include/gpuplan/csv.h include/gpuplan/units.h
include/gpuplan/trace.h:
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/common.h:
include/gpuplan/gpupolicy.h:
include/gpuplan/csv.h:
include/gpuplan/units.h:
