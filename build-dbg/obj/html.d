build-dbg/obj/html.o: sim/html.c include/gpuplan/html.h \
 include/gpuplan/store.h include/gpuplan/results.h \
 include/gpuplan/common.h include/gpuplan/scenario.h \
 include/gpuplan/catalog.h include/gpuplan/gpupolicy.h \
 include/gpuplan/units.h
include/gpuplan/html.h:
include/gpuplan/store.h:
include/gpuplan/results.h:
include/gpuplan/common.h:
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/gpupolicy.h:
include/gpuplan/units.h:
