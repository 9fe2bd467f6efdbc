build-dbg/obj/sched.o: sim/sched.c include/gpuplan/sched.h \
 include/gpuplan/scenario.h include/gpuplan/catalog.h \
 include/gpuplan/common.h include/gpuplan/gpupolicy.h
include/gpuplan/sched.h:
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/common.h:
include/gpuplan/gpupolicy.h:
