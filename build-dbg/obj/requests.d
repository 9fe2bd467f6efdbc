build-dbg/obj/requests.o: sim/requests.c include/gpuplan/requests.h \
 include/gpuplan/scenario.h include/gpuplan/catalog.h \
 include/gpuplan/common.h include/gpuplan/gpupolicy.h \
 include/gpuplan/csv.h include/gpuplan/arrivals.h include/gpuplan/units.h
include/gpuplan/requests.h:
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/common.h:
include/gpuplan/gpupolicy.h:
include/gpuplan/csv.h:
include/gpuplan/arrivals.h:
include/gpuplan/units.h:
