import PXTools

await PXMultiCall.main(PXFind.self)
