build-dbg/obj/sha256.o: sim/sha256.c include/gpuplan/sha256.h
include/gpuplan/sha256.h:
