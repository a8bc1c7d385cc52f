import PXTools

await PXMultiCall.main(PXLs.self)
