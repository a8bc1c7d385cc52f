import DICOMData
import DICOMProtocol
import NIOCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension AssociationConnection {
    /// How much of a file one `pread(2)` takes: whole PDV fragments, about 1 MiB.
    static let streamingReadSize = 1 << 20

    /// Sends one DIMSE message whose data set is `length` bytes of an open file starting at `offset`
    /// (PS3.7 §9.3.1, PS3.8 §9.3.5, Annex E).
    ///
    /// The data set is never held whole in memory: a chunk of about 1 MiB is laid out as whole P-DATA-TF
    /// PDUs (one PDV of the peer's maximum length each) in one ByteBuffer, and `pread(2)` puts the file's
    /// bytes straight into it after each header, so they are copied once. The chunk is written below the
    /// PDU encoder, straight to the channel (not through the async writer, whose writability lags behind
    /// the event loop), and at most two chunks are in flight: before a chunk is written the one before
    /// the previous must have reached the socket, each wait bounded by `timeout` (the DIMSE timeout; a
    /// peer that stops reading gets its connection closed). Every earlier write on the association has
    /// been processed already (a response to it arrived), so ordering holds.
    func send(
        _ message: DIMSEMessage, presentationContextID: UInt8, dataSetOf descriptor: Int32, offset: Int, length: Int,
        path: String, timeout: TimeAmount?
    ) async throws {
        guard let negotiated = self.negotiated else {
            throw DICOMNetworkError.protocolError("no association established")
        }
        let channel = self.channel
        let waitingFor = "the peer reading the C-STORE data set"
        let command = message.commandSet.encoded(allocator: channel.allocator)
        let commandFragments = try PDataFragmenter(
            presentationContextID: presentationContextID, command: command, dataset: nil,
            peerMaximumPDULength: negotiated.peerMaximumPDULength)
        let fragmentLength = commandFragments.fragmentLength
        for data in commandFragments {
            channel.write(try self.admit(data, sending: "\(message.commandField)"), promise: nil)
        }
        if length == 0 {
            let empty = DataTF(
                PDV(presentationContextID: presentationContextID, messageControlHeader: .dataLast, data: ByteBuffer()))
            let done = channel.eventLoop.makePromise(of: Void.self)
            channel.writeAndFlush(try self.admit(empty, sending: "a data set"), promise: done)
            try await self.wait(for: done.futureResult, timeout: timeout, waitingFor: waitingFor)
            return
        }
        // Whole PDUs per chunk: each P-DATA-TF is 12 header bytes (PDU type, reserved, length; PDV item
        // length, context ID, message control header) and one fragment.
        // A PDU may be shorter than the peer's maximum: fragments stay within a chunk.
        let dataFragmentLength = min(fragmentLength, Self.streamingReadSize)
        let perChunk = max(1, Self.streamingReadSize / dataFragmentLength)
        var position = offset
        var remaining = length
        var inFlight: [EventLoopFuture<Void>] = []
        while remaining > 0 {
            let fragments = min(perChunk, (remaining + dataFragmentLength - 1) / dataFragmentLength)
            let want = min(perChunk * dataFragmentLength, remaining)
            var buffer = channel.allocator.buffer(capacity: want + 12 * fragments)
            var left = want
            while left > 0 {
                let n = min(dataFragmentLength, left)
                left -= n
                let header = PDV.MessageControlHeader(isCommand: false, isLastFragment: remaining == want && left == 0)
                buffer.writeInteger(PDUType.dataTF.rawValue)
                buffer.writeInteger(UInt8(0))
                buffer.writeInteger(UInt32(6 + n), endianness: .big)
                buffer.writeInteger(UInt32(2 + n), endianness: .big)
                buffer.writeInteger(presentationContextID)
                buffer.writeInteger(header.rawValue)
                let start = buffer.writerIndex
                // The file's bytes land once, straight in the PDU buffer.
                try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: n) { raw in
                    try Self.readFully(descriptor, into: raw.baseAddress!, count: n, at: position, path: path)
                }
                position += n
                // Evt9 for each P-DATA-TF (PS3.8 §9.2): the state machine must allow the send.
                let pdv = PDV(
                    presentationContextID: presentationContextID, messageControlHeader: header,
                    data: buffer.getSlice(at: start, length: n)!)
                _ = try self.admit(DataTF(pdv), sending: "a data set")
            }
            remaining -= want
            if inFlight.count >= 2 {
                try await self.wait(for: inFlight.removeFirst(), timeout: timeout, waitingFor: waitingFor)
            }
            inFlight.append(Self.writeEncoded(buffer, on: channel))
        }
        for future in inFlight {
            try await self.wait(for: future, timeout: timeout, waitingFor: waitingFor)
        }
    }

    /// `pread(2)` until `count` bytes are in; a file that ends first changed while being sent.
    static func readFully(
        _ descriptor: Int32, into base: UnsafeMutableRawPointer, count: Int, at position: Int, path: String
    ) throws -> Int {
        let done: Int
        do {
            done = try POSIX.readFully(descriptor, into: base, count: count, at: position)
        } catch {
            throw DICOMNetworkError.fileError("cannot read \(path): \(error)")
        }
        guard done == count else {
            throw DICOMNetworkError.fileError("\(path) ended early (it changed while being sent)")
        }
        return done
    }

    /// Writes already-encoded PDUs and flushes, from the PDU encoder's context so that they pass
    /// below it (no second copy); the future completes when the bytes reached the socket.
    static func writeEncoded(_ buffer: ByteBuffer, on channel: any Channel) -> EventLoopFuture<Void> {
        channel.eventLoop.flatSubmit {
            do {
                let context = try channel.pipeline.syncOperations.context(
                    handlerType: MessageToByteHandler<PDUEncoder>.self)
                let promise = channel.eventLoop.makePromise(of: Void.self)
                context.writeAndFlush(NIOAny(buffer), promise: promise)
                return promise.futureResult
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
        }
    }

    /// Waits for a write to reach the socket, at most `timeout`; on expiry the connection is closed
    /// (which fails the write) and a DIMSE timeout is thrown. A write that fails otherwise (the peer
    /// aborted or closed) is a closed connection.
    private func wait(for write: EventLoopFuture<Void>, timeout: TimeAmount?, waitingFor: String) async throws {
        let channel = self.channel
        let expired = WriteTimeoutFlag()
        let timer = timeout.map { timeout in
            channel.eventLoop.scheduleTask(in: timeout) {
                expired.value.store(true, ordering: .relaxed)
                channel.close(promise: nil)
            }
        }
        do {
            try await write.get()
            timer?.cancel()
        } catch {
            timer?.cancel()
            if expired.value.load(ordering: .relaxed) { throw DICOMNetworkError.dimseTimeout(waitingFor) }
            throw DICOMNetworkError.connectionClosed("the connection failed while sending a data set: \(error)")
        }
    }
}

/// Set when a data-set write outlived the DIMSE timeout.
final class WriteTimeoutFlag: Sendable {
    let value = Atomic<Bool>(false)
}
