build-dbg/obj/gpupolicy.o: sim/gpupolicy.c include/gpuplan/gpupolicy.h \
 include/gpuplan/common.h
include/gpuplan/gpupolicy.h:
include/gpuplan/common.h:
