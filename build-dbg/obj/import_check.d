build-dbg/obj/import_check.o: sim/import_check.c include/gpuplan/import.h \
 include/gpuplan/common.h include/gpuplan/results.h \
 include/gpuplan/scenario.h include/gpuplan/catalog.h \
 include/gpuplan/gpupolicy.h include/gpuplan/sim.h
include/gpuplan/import.h:
include/gpuplan/common.h:
include/gpuplan/results.h:
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/gpupolicy.h:
include/gpuplan/sim.h:
