import PXTools

await PXMultiCall.main(PXMove.self)
