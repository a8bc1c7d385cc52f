import PXTools

await PXMultiCall.main(PXGet.self)
