import PXTools

await PXMultiCall.main(PXListen.self)
