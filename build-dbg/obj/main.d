build-dbg/obj/main.o: sim/main.c include/gpuplan/advise.h \
 include/gpuplan/results.h include/gpuplan/common.h \
 include/gpuplan/scenario.h include/gpuplan/catalog.h \
 include/gpuplan/gpupolicy.h include/gpuplan/store.h \
 include/gpuplan/estimate.h include/gpuplan/footprint.h \
 include/gpuplan/roofline.h include/gpuplan/html.h \
 include/gpuplan/import.h include/gpuplan/report.h \
 include/gpuplan/opencost.h include/gpuplan/search.h \
 include/gpuplan/sim.h include/gpuplan/sweep.h include/gpuplan/units.h
include/gpuplan/advise.h:
include/gpuplan/results.h:
include/gpuplan/common.h:
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/gpupolicy.h:
include/gpuplan/store.h:
include/gpuplan/estimate.h:
include/gpuplan/footprint.h:
include/gpuplan/roofline.h:
include/gpuplan/html.h:
include/gpuplan/import.h:
include/gpuplan/report.h:
include/gpuplan/opencost.h:
include/gpuplan/search.h:
include/gpuplan/sim.h:
include/gpuplan/sweep.h:
include/gpuplan/units.h:
