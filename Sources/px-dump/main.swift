import PXTools

PXDump.main()
