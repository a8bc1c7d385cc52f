import PXTools

await PXMultiCall.main(PXDump.self)
