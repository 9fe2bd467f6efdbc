build-dbg/obj/engine.o: sim/engine.c include/gpuplan/engine.h \
 include/gpuplan/common.h
include/gpuplan/engine.h:
include/gpuplan/common.h:
