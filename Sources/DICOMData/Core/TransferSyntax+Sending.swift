extension TransferSyntax {
    /// The transfer syntaxes a data set encoded in this one can be sent in without losing anything, best
    /// first: this one (the data set goes out as it is), then the uncompressed syntaxes px re-encodes it to
    /// losslessly. Explicit VR Big Endian (PS3.5 §A.3) and Deflated Explicit VR Little Endian (PS3.5 §A.5)
    /// go to Explicit, then Implicit VR Little Endian; Explicit and Implicit VR Little Endian to each other
    /// (PS3.5 §A.1, §A.2: the same values, the VR given or implied). Encapsulated (compressed) pixel data is
    /// never decompressed or recompressed (PS3.5 §A.4): such a data set goes in its own syntax or not at all.
    /// Every sending path (px-push on both backends, px-sync, px-serve's C-MOVE and C-GET sub-operations)
    /// proposes and chooses from this list.
    public var losslessSendingSyntaxes: [TransferSyntax] {
        if self.isEncapsulated { return [self] }
        return [self] + [TransferSyntax.explicitVRLittleEndian, .implicitVRLittleEndian].filter { $0 != self }
    }

    /// The transfer syntax lists to propose, one presentation context each, for sending a data set in this
    /// syntax: this one alone (so that an acceptor that prefers another one it was also offered still takes
    /// it), then the lossless fallbacks of ``losslessSendingSyntaxes`` together, when there are any.
    public var sendingProposals: [[TransferSyntax]] {
        let fallbacks = Array(self.losslessSendingSyntaxes.dropFirst())
        return fallbacks.isEmpty ? [[self]] : [[self], fallbacks]
    }
}
