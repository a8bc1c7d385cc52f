import PXTools

await PXMultiCall.main(PXEcho.self)
